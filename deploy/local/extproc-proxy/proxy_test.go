package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// sseReplica writes the first event, then waits for next to close before
// writing the rest: a client that reads the first event before closing next
// proves the proxy does not buffer.
func sseReplica(next <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "data: two\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// readEvent reads one SSE event (through its blank line).
func readEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := br.ReadString('\n')
		ev.WriteString(line)
		if err != nil {
			t.Fatalf("reading an event: %v (so far %q)", err, ev.String())
		}
		if line == "\n" {
			return ev.String()
		}
	}
}

// TestStreamsChunkByChunk: the client gets the first SSE event before the
// replica writes the second, and the EPP sees, in order, the request
// headers (pseudo-headers, x-request-id, the client's headers), the body
// with end_of_stream, the response headers and each response chunk as its
// own frame, end_of_stream on the last; the stream is then closed cleanly.
func TestStreamsChunkByChunk(t *testing.T) {
	next := make(chan struct{})
	h := newHarness(t, newFakeEPP(), sseReplica(next))
	const body = `{"model":"stories","prompt":"Once","stream":true}`
	resp := h.post(t, body, "X-Test", "yes")
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get(destHeader) != h.upstream || resp.Header.Get("X-Fake-Epp") != "seen" {
		t.Fatalf("status %d, %s %q, x-fake-epp %q", resp.StatusCode, destHeader, resp.Header.Get(destHeader), resp.Header.Get("X-Fake-Epp"))
	}
	br := bufio.NewReader(resp.Body)
	if ev := readEvent(t, br); ev != "data: one\n\n" {
		t.Fatalf("first event %q", ev)
	}
	close(next) // only now does the replica write the rest
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "data: two\n\ndata: [DONE]\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}

	frames, end := h.frames(t)
	if end != io.EOF {
		t.Errorf("the ext_proc stream ended with %v, want a clean close", end)
	}
	if len(frames) < 5 {
		t.Fatalf("%d frames, want at least 5", len(frames))
	}
	rh := frames[0].GetRequestHeaders()
	if rh == nil || rh.EndOfStream {
		t.Fatalf("frame 0: %v, want request headers without end_of_stream", frames[0])
	}
	for k, want := range map[string]string{":method": "POST", ":path": "/v1/completions", ":authority": strings.TrimPrefix(h.url, "http://"),
		"x-test": "yes", "content-type": "application/json", "content-length": "49"} {
		if got := headerOf(rh.Headers, k); got != want {
			t.Errorf("request header %s = %q, want %q", k, got, want)
		}
	}
	if len(headerOf(rh.Headers, "x-request-id")) != 36 {
		t.Errorf("x-request-id %q: want a generated UUID", headerOf(rh.Headers, "x-request-id"))
	}
	if rb := frames[1].GetRequestBody(); rb == nil || string(rb.Body) != body || !rb.EndOfStream {
		t.Errorf("frame 1: %v, want the whole body with end_of_stream", frames[1])
	}
	rsh := frames[2].GetResponseHeaders()
	if rsh == nil || headerOf(rsh.Headers, ":status") != "200" || headerOf(rsh.Headers, "content-type") != "text/event-stream" {
		t.Fatalf("frame 2: %v, want response headers with :status 200", frames[2])
	}
	var chunks []string
	for i, f := range frames[3:] {
		b := f.GetResponseBody()
		if b == nil {
			t.Fatalf("frame %d: %v, want a response body chunk", i+3, f)
		}
		if b.EndOfStream != (i == len(frames)-4) {
			t.Errorf("frame %d: end_of_stream %v", i+3, b.EndOfStream)
		}
		chunks = append(chunks, string(b.Body))
	}
	if chunks[0] != "data: one\n\n" || strings.Join(chunks, "") != "data: one\n\ndata: two\n\ndata: [DONE]\n\n" {
		t.Errorf("response chunks %q: want the first event alone, then the rest", chunks)
	}
}

// TestBodyMutations: the replica gets the request body as the EPP rewrote
// it, and the client gets each response chunk as the EPP rewrote it.
func TestBodyMutations(t *testing.T) {
	f := newFakeEPP()
	f.reqBody = func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(`"alias"`), []byte(`"stories"`)) }
	f.respChunk = bytes.ToUpper
	got := make(chan string, 1)
	h := newHarness(t, f, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b) + " " + r.Header.Get("X-Picked")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"text":"hello"}`))
	})
	resp := h.post(t, `{"model":"alias","prompt":"x"}`)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if up := <-got; up != `{"model":"stories","prompt":"x"} yes` {
		t.Errorf("the replica got %q, want the mutated body and the EPP's header", up)
	}
	if string(b) != `{"TEXT":"HELLO"}` {
		t.Errorf("the client got %q, want the EPP's mutated chunks", b)
	}
}

// TestContinueWithoutMutation: an EPP that answers each response chunk
// with CONTINUE and no mutation leaves the original chunks to the client.
func TestContinueWithoutMutation(t *testing.T) {
	f := newFakeEPP()
	f.continueResp = true
	next := make(chan struct{})
	h := newHarness(t, f, sseReplica(next))
	resp := h.post(t, `{"stream":true}`)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if ev := readEvent(t, br); ev != "data: one\n\n" {
		t.Fatalf("first event %q", ev)
	}
	close(next)
	if rest, err := io.ReadAll(br); err != nil || string(rest) != "data: two\n\ndata: [DONE]\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

// TestImmediateResponse: the EPP's immediate response reaches the client
// verbatim (status, headers, body) and the replica is never called.
func TestImmediateResponse(t *testing.T) {
	f := newFakeEPP()
	f.immediate = &extproc.ImmediateResponse{Status: &typev3.HttpStatus{Code: typev3.StatusCode_TooManyRequests},
		Headers: &extproc.HeaderMutation{SetHeaders: []*corev3.HeaderValueOption{setHeader("x-reason", "busy")}}, Body: []byte("go away")}
	h := newHarness(t, f, func(w http.ResponseWriter, r *http.Request) { t.Error("the replica was called") })
	resp := h.post(t, `{}`)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("X-Reason") != "busy" || string(b) != "go away" {
		t.Errorf("got %d %q %q, want 429 busy \"go away\"", resp.StatusCode, resp.Header.Get("X-Reason"), b)
	}
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestDestinationFallback: with a list whose first entry refuses
// connections, the next one serves and is named in the response; with none
// reachable the client gets 503.
func TestDestinationFallback(t *testing.T) {
	replica := func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }
	f := newFakeEPP()
	dead := closedPort(t)
	h := newHarness(t, f, replica)
	f.dest = dead + ", " + h.upstream
	resp := h.post(t, `{}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok" || resp.Header.Get(destHeader) != h.upstream {
		t.Errorf("got %d %q from %q, want 200 ok from %s", resp.StatusCode, b, resp.Header.Get(destHeader), h.upstream)
	}
	h.frames(t)
	f.dest = dead
	resp = h.post(t, `{}`)
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("no reachable destination: got %d, want 503", resp.StatusCode)
	}
}

// TestClientCancel: a client that goes away mid-stream cancels the
// replica's request and the ext_proc stream.
func TestClientCancel(t *testing.T) {
	upstreamGone := make(chan struct{})
	h := newHarness(t, newFakeEPP(), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(upstreamGone)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/completions", strings.NewReader(`{"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ev := readEvent(t, bufio.NewReader(resp.Body)); ev != "data: one\n\n" {
		t.Fatalf("first event %q", ev)
	}
	cancel()
	select {
	case <-upstreamGone:
	case <-time.After(10 * time.Second):
		t.Fatal("the replica's request was not cancelled within 10 s")
	}
	if _, end := h.frames(t); status.Code(end) != codes.Canceled {
		t.Errorf("the ext_proc stream ended with %v, want CANCELLED", end)
	}
}

// TestUpstreamDiesMidStream: a replica that drops the connection mid-stream
// ends the client's response truncated (a read error, not a clean end) and
// the ext_proc stream with an error, never with end_of_stream.
func TestUpstreamDiesMidStream(t *testing.T) {
	drop := make(chan struct{})
	h := newHarness(t, newFakeEPP(), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-drop // once the client has the first event
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	resp := h.post(t, `{"stream":true}`)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if ev := readEvent(t, br); ev != "data: one\n\n" {
		t.Fatalf("first event %q", ev)
	}
	close(drop)
	if _, err := io.ReadAll(br); err == nil {
		t.Error("the client's response ended cleanly; want it truncated")
	}
	frames, end := h.frames(t)
	if end == io.EOF || end == nil {
		t.Errorf("the ext_proc stream ended with %v, want an error", end)
	}
	for _, f := range frames {
		if f.GetResponseBody().GetEndOfStream() {
			t.Error("the EPP saw end_of_stream for a truncated response")
		}
	}
}

// TestLimits: a request body over MaxBody is a 413; an EPP that does not
// pick within PickTimeout is a 504.
func TestLimits(t *testing.T) {
	f := newFakeEPP()
	h := newHarness(t, f, func(w http.ResponseWriter, r *http.Request) { t.Error("the replica was called") })
	h.proxy.MaxBody = 10
	resp := h.post(t, `{"prompt":"more than ten bytes"}`)
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("body over the limit: %d, want 413", resp.StatusCode)
	}
	h.proxy.MaxBody = 1 << 20
	h.proxy.PickTimeout = 200 * time.Millisecond
	f.silent = true
	resp = h.post(t, `{}`)
	resp.Body.Close()
	if resp.StatusCode != 504 {
		t.Errorf("silent EPP: %d, want 504", resp.StatusCode)
	}
}

// TestNoBody: a request without a body sends headers with end_of_stream and
// is routed on the headers response alone.
func TestNoBody(t *testing.T) {
	h := newHarness(t, newFakeEPP(), func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Method+" "+r.URL.Path) })
	resp, err := http.Get(h.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "GET /health" {
		t.Errorf("got %q", b)
	}
	frames, _ := h.frames(t)
	if !frames[0].GetRequestHeaders().GetEndOfStream() {
		t.Errorf("frame 0 %v: want request headers with end_of_stream", frames[0])
	}
	for _, f := range frames {
		if f.GetRequestBody() != nil {
			t.Error("a body frame for a request without a body")
		}
	}
}

// TestSkippedResponseProcessing: an EPP that closes the stream cleanly
// after the request phase (its skip mode) leaves the response to pass
// through unprocessed, streamed all the same.
func TestSkippedResponseProcessing(t *testing.T) {
	f := newFakeEPP()
	f.skipResponse = true
	next := make(chan struct{})
	h := newHarness(t, f, sseReplica(next))
	resp := h.post(t, `{"stream":true}`)
	defer resp.Body.Close()
	if resp.Header.Get("X-Fake-Epp") != "" || resp.Header.Get(destHeader) != h.upstream {
		t.Errorf("headers %v: want the replica's, unprocessed, and the destination", resp.Header)
	}
	br := bufio.NewReader(resp.Body)
	if ev := readEvent(t, br); ev != "data: one\n\n" {
		t.Fatalf("first event %q", ev)
	}
	close(next)
	if rest, err := io.ReadAll(br); err != nil || string(rest) != "data: two\n\ndata: [DONE]\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	frames, _ := h.frames(t)
	for _, fr := range frames {
		if fr.GetResponseHeaders() != nil || fr.GetResponseBody() != nil {
			t.Errorf("a response-phase frame after the EPP closed the stream: %v", fr)
		}
	}
}

// TestEPPFailsMidResponse: an EPP that ends the stream with an error while
// the response streams truncates the client's response.
func TestEPPFailsMidResponse(t *testing.T) {
	f := newFakeEPP()
	f.failResponse = true
	h := newHarness(t, f, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 3 {
			io.WriteString(w, "data: x\n\n")
			w.(http.Flusher).Flush()
		}
	})
	resp := h.post(t, `{"stream":true}`)
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err == nil && resp.StatusCode == 200 {
		t.Errorf("status %d and a clean end: want the response failed or truncated", resp.StatusCode)
	}
	if _, end := h.frames(t); end != errEPPFailed {
		t.Errorf("the fake EPP's stream ended with %v", end)
	}
}

// TestTrailers: the replica's trailers go to the EPP as a trailers frame
// (instead of an empty end_of_stream chunk) and on to the client.
func TestTrailers(t *testing.T) {
	h := newHarness(t, newFakeEPP(), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Checksum")
		io.WriteString(w, "body")
		w.Header().Set("X-Checksum", "abc")
	})
	resp := h.post(t, `{}`)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "body" || resp.Trailer.Get("X-Checksum") != "abc" {
		t.Errorf("body %q (%v), trailers %v: want body and X-Checksum: abc", b, err, resp.Trailer)
	}
	frames, end := h.frames(t)
	last := frames[len(frames)-1].GetResponseTrailers()
	if end != io.EOF || last == nil || headerOf(last.Trailers, "x-checksum") != "abc" {
		t.Errorf("last frame %v, end %v: want the trailers, then a clean close", frames[len(frames)-1], end)
	}
}
