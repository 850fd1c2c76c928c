package fakeserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is how one request goes wrong.
type Fault int

const (
	OK         Fault = iota // a correct stream
	HTTP500                 // status 500 with an OpenAI error body
	Malformed               // a data line that is not JSON (needs max_tokens >= 2)
	Drop                    // the connection is cut after two chunks (max_tokens >= 3)
	NoDone                  // the stream ends cleanly without [DONE]
	ErrorEvent              // llama-server's "error: {...}" line mid-stream (max_tokens >= 2)
	ErrorChunk              // a data chunk holding an "error" object (max_tokens >= 2)
	NoContent               // 200 and [DONE] but no content chunk
	SlowStart               // waits 10 s before the first chunk (for timeouts)
)

// Server is a running fake. Set its fields before the first request. The
// chat endpoint streams the chat chunk shape (a role-only first chunk,
// then delta.content), the completions endpoint "text".
type Server struct {
	*httptest.Server
	// TTFT is the delay before the first chunk; ITL the delay before each
	// further one.
	TTFT, ITL time.Duration
	// NoUsage leaves out the final usage chunk.
	NoUsage bool
	// TokensPerChunk > 1 makes each chunk stand for that many tokens:
	// usage.completion_tokens is chunks*TokensPerChunk.
	TokensPerChunk int
	// CloseAfterStream ends each correct stream the way llama-server
	// does: the last chunk and the end of the body in one write, then the
	// connection closed 20 ms later without a "Connection: close" and
	// without reading the request the client sent on it meanwhile.
	CloseAfterStream bool
	// APIKey, when set, is required as "Authorization: Bearer APIKey";
	// a request without it gets 401.
	APIKey string
	// Faults picks the fault of the i-th request (counting from 0 in
	// arrival order); nil: all OK.
	Faults func(i int) Fault

	n, inFlight, maxInFlight atomic.Int64
	mu                       sync.Mutex
	bad                      []string
	prompts                  [][]int
}

// New starts a fake with the given delays; Close it when done.
func New(ttft, itl time.Duration) *Server {
	s := &Server{TTFT: ttft, ITL: itl, TokensPerChunk: 1}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/completions", s.complete)
	mux.HandleFunc("POST /v1/chat/completions", s.complete)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
	})
	s.Server = httptest.NewServer(mux)
	return s
}

// Requests is the number of requests received.
func (s *Server) Requests() int { return int(s.n.Load()) }

// MaxInFlight is the most requests that were being answered at once.
func (s *Server) MaxInFlight() int { return int(s.maxInFlight.Load()) }

// Problems lists what was wrong with the request bodies received.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bad...)
}

// Prompts returns the token-id prompts received, in arrival order.
func (s *Server) Prompts() [][]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]int(nil), s.prompts...)
}

func (s *Server) complain(format string, a ...any) {
	s.mu.Lock()
	s.bad = append(s.bad, fmt.Sprintf(format, a...))
	s.mu.Unlock()
}

// body is the part of a request the fake checks.
type body struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	Messages      json.RawMessage `json:"messages"`
	MaxTokens     *int            `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS   bool     `json:"ignore_eos"`
	Temperature *float64 `json:"temperature"`
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	i := int(s.n.Add(1) - 1)
	cur := s.inFlight.Add(1)
	// A request stops counting just before its last write: the client may
	// send its next request as soon as it reads that write, before this
	// handler has returned.
	var once sync.Once
	done := func() { once.Do(func() { s.inFlight.Add(-1) }) }
	defer done()
	for {
		m := s.maxInFlight.Load()
		if cur <= m || s.maxInFlight.CompareAndSwap(m, cur) {
			break
		}
	}
	if s.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.APIKey {
		done()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Invalid API Key","type":"authentication_error"}}`)
		return
	}
	fault := OK
	if s.Faults != nil {
		fault = s.Faults(i)
	}

	var b body
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		s.complain("request %d: body is not JSON: %v", i, err)
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
	switch {
	case b.Model == "":
		s.complain("request %d: no model", i)
	case !b.Stream || !b.StreamOptions.IncludeUsage:
		s.complain("request %d: stream %v, include_usage %v", i, b.Stream, b.StreamOptions.IncludeUsage)
	case !b.IgnoreEOS:
		s.complain("request %d: ignore_eos not set", i)
	case b.MaxTokens == nil || *b.MaxTokens < 1:
		s.complain("request %d: max_tokens missing or < 1", i)
	case b.Temperature == nil:
		s.complain("request %d: no temperature", i)
	case chat && len(b.Messages) == 0:
		s.complain("request %d: chat request without messages", i)
	case !chat && len(b.Prompt) == 0:
		s.complain("request %d: no prompt", i)
	}
	if !chat && len(b.Prompt) > 0 && b.Prompt[0] == '[' {
		var ids []int
		if err := json.Unmarshal(b.Prompt, &ids); err != nil {
			s.complain("request %d: prompt array is not token ids: %v", i, err)
		}
		s.mu.Lock()
		s.prompts = append(s.prompts, ids)
		s.mu.Unlock()
	}
	n := 1
	if b.MaxTokens != nil {
		n = *b.MaxTokens
	}

	if fault == HTTP500 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		done()
		io.WriteString(w, `{"error":{"code":500,"message":"the fake failed","type":"server_error"}}`)
		return
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(s string) {
		io.WriteString(w, s)
		if fl != nil {
			fl.Flush()
		}
	}
	sleep := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	tpc := max(s.TokensPerChunk, 1)
	chunks := (n + tpc - 1) / tpc
	if fault == NoContent {
		done()
		send("data: [DONE]\n\n")
		return
	}
	if chat {
		send(`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	}
	first := s.TTFT
	if fault == SlowStart {
		first = 10 * time.Second
	}
	for c := range chunks {
		d := s.ITL
		if c == 0 {
			d = first
		}
		if !sleep(d) {
			return
		}
		switch {
		case fault == Malformed && c == 1:
			done()
			send("data: {\"choices\": [not json\n\n")
			return
		case fault == Drop && c == 2:
			done()
			panic(http.ErrAbortHandler) // cut the connection mid-stream
		case fault == ErrorEvent && c == 1:
			done()
			send(`error: {"code":500,"message":"the fake's slot crashed","type":"server_error"}` + "\n\n")
			return
		case fault == ErrorChunk && c == 1:
			done()
			send(`data: {"error":{"message":"out of memory","type":"server_error"}}` + "\n\n")
			return
		}
		if chat {
			send(`data: {"choices":[{"index":0,"delta":{"content":"tok"},"finish_reason":null}]}` + "\n\n")
		} else {
			send(`data: {"choices":[{"index":0,"text":"tok","finish_reason":null}]}` + "\n\n")
		}
	}
	if chat {
		send(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n")
	} else {
		send(`data: {"choices":[{"index":0,"text":"","finish_reason":"length"}]}` + "\n\n")
	}
	if !s.NoUsage {
		send(fmt.Sprintf(`data: {"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
			promptTokens(b.Prompt), chunks*tpc, promptTokens(b.Prompt)+chunks*tpc))
	}
	done()
	if fault == NoDone {
		return
	}
	if s.CloseAfterStream {
		if hj, ok := w.(http.Hijacker); ok {
			conn, buf, err := hj.Hijack()
			if err != nil {
				s.complain("request %d: hijack: %v", i, err)
				return
			}
			// "data: [DONE]\n\n" as the last chunk (14 bytes), then the
			// zero-length chunk that ends the body.
			buf.WriteString("e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
			buf.Flush()
			time.Sleep(20 * time.Millisecond)
			conn.Close()
			return
		}
	}
	send("data: [DONE]\n\n")
}

// promptTokens is the length of a token-id prompt, or bytes/4 of a text.
func promptTokens(p json.RawMessage) int {
	var ids []int
	if json.Unmarshal(p, &ids) == nil {
		return len(ids)
	}
	var s string
	if json.Unmarshal(p, &s) == nil {
		return max(len(s)/4, 1)
	}
	return 1
}
