package server

import (
	"encoding/json"
	"net/http"
	"time"
)

// sseWriter writes Server-Sent Events as OpenAI streams them: each chunk
// is "data: " + one line of JSON + "\n\n", flushed at once; the stream
// ends with "data: [DONE]\n\n". Each write must finish within timeout, or
// the connection is cut (a client that stopped reading).
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     []byte
	started bool
	err     error // the first write error: later writes are dropped
}

func newSSE(w http.ResponseWriter, timeout time.Duration) *sseWriter {
	return &sseWriter{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

// start sends the headers (status 200) once.
func (s *sseWriter) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // proxies: do not buffer the stream
	s.w.WriteHeader(http.StatusOK)
}

// send writes one chunk.
func (s *sseWriter) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.buf = append(append(append(s.buf[:0], "data: "...), body...), "\n\n"...)
	return s.write(s.buf)
}

// done writes the terminating "data: [DONE]".
func (s *sseWriter) done() error { return s.write([]byte("data: [DONE]\n\n")) }

func (s *sseWriter) write(b []byte) error {
	if s.err != nil {
		return s.err
	}
	s.start()
	if s.timeout > 0 {
		s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.err = err
	}
	return s.err
}
