package benchserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kiln/benchserve/fakeserver"
)

func ids(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = 100 + i
	}
	return p
}

func idRequests(n, in, out int) []Request {
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{PromptIDs: ids(in), PromptLen: in, OutputLen: out}
	}
	return reqs
}

func newClient(s *fakeserver.Server, path string) *Client {
	return &Client{BaseURL: s.URL, Path: path, Model: "fake-model", HTTP: NewHTTPClient(64)}
}

func checkProblems(t *testing.T, s *fakeserver.Server) {
	t.Helper()
	for _, p := range s.Problems() {
		t.Error("fake server:", p)
	}
}

// TestTimingMath: the fake waits TTFT before the first chunk and ITL
// before each further one; the client's TTFT, ITL, TPOT and E2EL must
// match those delays. The client cannot see a chunk before the server
// sends it, so the lower bounds are tight; the upper bounds allow for a
// loaded machine's scheduling (2 cores shared by many processes) yet
// still catch the likely mistakes: TTFT taken at the end of the stream,
// gaps summed instead of taken one by one, TPOT over chunks instead of
// tokens. A timer never fires early, so E2EL >= TTFT_server + (n-1)*ITL
// and sum(ITL) >= (n-1)*ITL - (TTFT - TTFT_server) hold exactly, and so
// does TPOT*(tokens-1) = E2EL-TTFT = sum(ITL) + the tail after the last
// chunk.
func TestTimingMath(t *testing.T) {
	// Delays long enough that a starved CI machine's scheduling (seen:
	// +67 ms on a first chunk at load 12) stays inside the slack while the
	// mistakes stay outside it (TTFT at the end: +350 ms).
	const ttft, itl, out = 100 * time.Millisecond, 50 * time.Millisecond, 8
	const slack = 75 * time.Millisecond
	s := fakeserver.New(ttft, itl)
	defer s.Close()
	c := newClient(s, CompletionsPath)
	m, err := Run{RequestRate: inf, MaxConcurrency: 2}.Execute(context.Background(), c, idRequests(4, 16, out))
	if err != nil {
		t.Fatal(err)
	}
	checkProblems(t, s)
	for i, o := range m.Outputs {
		if !o.Success {
			t.Fatalf("request %d failed: %s", i, o.Error)
		}
		if o.TTFT < ttft || o.TTFT > ttft+2*slack {
			t.Errorf("request %d: TTFT %v, want %v (+%v)", i, o.TTFT, ttft, 2*slack)
		}
		if o.Latency < ttft+(out-1)*itl {
			t.Errorf("request %d: E2EL %v, less than the %v the server took", i, o.Latency, ttft+(out-1)*itl)
		}
		if len(o.ITL) != out-1 || o.Chunks != out || o.OutputTokens != out || !o.UsageReported {
			t.Errorf("request %d: %d gaps, %d chunks, %d tokens (usage %v); want %d, %d, %d from usage", i, len(o.ITL), o.Chunks, o.OutputTokens, o.UsageReported, out-1, out, out)
		}
		sum := time.Duration(0)
		for _, g := range o.ITL {
			sum += g
		}
		// The last chunk was sent at least (out-1)*ITL after the first,
		// which was read TTFT-ttft late at most: an exact lower bound.
		if sum < (out-1)*itl-(o.TTFT-ttft) {
			t.Errorf("request %d: gaps sum to %v, want at least %v - %v", i, sum, (out-1)*itl, o.TTFT-ttft)
		}
		mean := sum / time.Duration(len(o.ITL))
		if mean > itl+slack {
			t.Errorf("request %d: mean ITL %v, want %v (+%v)", i, mean, itl, slack)
		}
		tpot, ok := o.TPOT()
		if tail := o.Latency - o.TTFT - sum; !ok || tpot != (o.Latency-o.TTFT)/(out-1) || tail < 0 || tpot-mean > 40*time.Millisecond {
			t.Errorf("request %d: TPOT %v, mean ITL %v, tail %v", i, tpot, mean, tail)
		}
		if o.PromptLen != 16 {
			t.Errorf("request %d: prompt len %d, want 16", i, o.PromptLen)
		}
	}
	r := Summarize(m, []float64{99})
	if r.Completed != 4 || r.Failed != 0 || r.TotalOutput != 4*out || r.TotalInput != 4*16 || r.OutputTokensSource != "usage" {
		t.Fatalf("summary %+v", r)
	}
	if ms := float64(ttft) / 1e6; r.TTFT.Median < ms || r.TTFT.Median > ms+2*float64(slack)/1e6 {
		t.Errorf("median TTFT %.2f ms, want %.0f", r.TTFT.Median, ms)
	}
	if ms := float64(itl) / 1e6; r.ITL.Mean < ms/2 || r.ITL.Mean > ms+float64(slack)/1e6 || r.TPOT.Mean < r.ITL.Mean-1 {
		t.Errorf("mean ITL %.2f, TPOT %.2f ms, want %.0f", r.ITL.Mean, r.TPOT.Mean, ms)
	}
	// Two at a time, four requests: at least two waves of one request's
	// latency (all four at once would take one).
	if wave := ttft + (out-1)*itl; m.Duration < 2*wave {
		t.Errorf("duration %v, want at least %v", m.Duration, 2*wave)
	}
	if r.MaxConcurrentRequests != 2 {
		t.Errorf("peak concurrent requests %d, want 2", r.MaxConcurrentRequests)
	}
}

// TestChatEndpoint: the role-only first chunk of the chat API is not the
// first token; text prompts go as messages.
func TestChatEndpoint(t *testing.T) {
	const ttft = 30 * time.Millisecond
	s := fakeserver.New(ttft, 2*time.Millisecond)
	defer s.Close()
	c := newClient(s, ChatPath)
	o := c.Do(context.Background(), Request{Text: "Tell me a story about a cat.", PromptLen: 7, OutputLen: 3})
	checkProblems(t, s)
	if !o.Success || o.Chunks != 3 || o.OutputTokens != 3 || o.TTFT < ttft {
		t.Fatalf("chat output %+v", o)
	}
	if o := c.Do(context.Background(), Request{PromptIDs: []int{1, 2}, PromptLen: 2, OutputLen: 3}); o.Success || !strings.Contains(o.Error, "completions endpoint") {
		t.Fatalf("token ids to chat: %+v", o)
	}
}

// TestOutputTokensWithoutUsage: with no usage chunk the client counts
// content chunks; with usage it believes the server, even when a chunk
// carries several tokens, and TPOT divides by the tokens.
func TestOutputTokensWithoutUsage(t *testing.T) {
	s := fakeserver.New(time.Millisecond, time.Millisecond)
	defer s.Close()
	s.NoUsage = true
	c := newClient(s, CompletionsPath)
	m, _ := Run{RequestRate: inf}.Execute(context.Background(), c, idRequests(2, 8, 5))
	r := Summarize(m, []float64{99})
	if r.OutputTokensSource != "chunks" || r.TotalOutput != 10 || m.Outputs[0].UsageReported {
		t.Fatalf("without usage: source %q, total %d", r.OutputTokensSource, r.TotalOutput)
	}
	if r.TotalInput != 16 { // the dataset's count when the server reports none
		t.Fatalf("total input %d, want 16", r.TotalInput)
	}

	s2 := fakeserver.New(20*time.Millisecond, 10*time.Millisecond)
	defer s2.Close()
	s2.TokensPerChunk = 2
	o := newClient(s2, CompletionsPath).Do(context.Background(), Request{PromptIDs: ids(4), PromptLen: 4, OutputLen: 10})
	if !o.Success || o.Chunks != 5 || o.OutputTokens != 10 || !o.UsageReported {
		t.Fatalf("two tokens a chunk: %+v", o)
	}
	// 4 gaps of >= 10 ms spread over the 9 tokens after the first, not
	// over the 4 chunks.
	if tpot, _ := o.TPOT(); tpot != (o.Latency-o.TTFT)/9 || tpot < 40*time.Millisecond/9 {
		t.Fatalf("TPOT %v, want (E2EL %v - TTFT %v)/9", tpot, o.Latency, o.TTFT)
	}
}

// TestFailuresAreCounted: every fault of the fake fails its own request
// with a message saying what happened; the others complete and the run
// goes on.
func TestFailuresAreCounted(t *testing.T) {
	faults := []fakeserver.Fault{fakeserver.OK, fakeserver.HTTP500, fakeserver.Malformed, fakeserver.Drop,
		fakeserver.NoDone, fakeserver.ErrorEvent, fakeserver.ErrorChunk, fakeserver.NoContent, fakeserver.OK}
	want := []string{"", "HTTP 500: server_error: the fake failed", "malformed chunk", "unexpected EOF",
		"stream ended before data: [DONE]", "error event: server_error: the fake's slot crashed",
		"error in stream: server_error: out of memory", "no content chunk", ""}
	s := fakeserver.New(time.Millisecond, time.Millisecond)
	defer s.Close()
	s.Faults = func(i int) fakeserver.Fault { return faults[i] }
	c := newClient(s, CompletionsPath)
	// One at a time, so that the i-th request to arrive is request i.
	m, err := Run{RequestRate: inf, MaxConcurrency: 1}.Execute(context.Background(), c, idRequests(len(faults), 4, 4))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range m.Outputs {
		if o.Success != (want[i] == "") || !strings.Contains(o.Error, want[i]) {
			t.Errorf("request %d (fault %d): success %v, error %q; want error containing %q", i, faults[i], o.Success, o.Error, want[i])
		}
	}
	r := Summarize(m, []float64{99})
	if r.Completed != 2 || r.Failed != len(faults)-2 || r.TotalOutput != 8 {
		t.Fatalf("completed %d failed %d output %d", r.Completed, r.Failed, r.TotalOutput)
	}
	if r.Errors[0] != "" || r.Errors[1] == "" || r.OutputLens[1] != 0 || r.TTFTs[1] != 0 {
		t.Fatalf("per-request arrays: errors %q output lens %v", r.Errors, r.OutputLens)
	}
}

// TestServerClosingIdleConnections: a server that hangs up after each
// stream (llama-server) must not fail the next request, which the client
// sends on the connection before it sees the close.
func TestServerClosingIdleConnections(t *testing.T) {
	s := fakeserver.New(0, 0)
	defer s.Close()
	s.CloseAfterStream = true
	m, err := Run{RequestRate: inf, MaxConcurrency: 1}.Execute(context.Background(), newClient(s, CompletionsPath), idRequests(5, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	checkProblems(t, s)
	for i, o := range m.Outputs {
		if !o.Success {
			t.Errorf("request %d: %s", i, o.Error)
		}
	}
	if s.Requests() != 5 {
		t.Errorf("server answered %d requests, want 5", s.Requests())
	}
}

func TestConnectionRefusedAndTimeout(t *testing.T) {
	s := fakeserver.New(0, 0)
	url := s.URL
	s.Close()
	c := &Client{BaseURL: url, Path: CompletionsPath, Model: "m"}
	if o := c.Do(context.Background(), Request{PromptIDs: ids(2), PromptLen: 2, OutputLen: 2}); o.Success || !strings.Contains(o.Error, "refused") {
		t.Fatalf("closed server: %+v", o)
	}

	s = fakeserver.New(0, 0)
	defer s.Close()
	s.Faults = func(int) fakeserver.Fault { return fakeserver.SlowStart }
	c = newClient(s, CompletionsPath)
	c.Timeout = 100 * time.Millisecond
	t0 := time.Now()
	o := c.Do(context.Background(), Request{PromptIDs: ids(2), PromptLen: 2, OutputLen: 2})
	if o.Success || !strings.Contains(o.Error, "timed out") || time.Since(t0) > 2*time.Second {
		t.Fatalf("slow server with a 100 ms timeout: %+v after %v", o, time.Since(t0))
	}
}

func TestFirstModelAndBearer(t *testing.T) {
	s := fakeserver.New(0, 0)
	defer s.Close()
	c := newClient(s, CompletionsPath)
	if m, err := c.FirstModel(context.Background()); err != nil || m != "fake-model" {
		t.Fatalf("FirstModel = %q, %v", m, err)
	}
	var got string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Invalid API Key","type":"authentication_error"}}`))
	})
	ts := httptest.NewServer(h)
	defer ts.Close()
	c = &Client{BaseURL: ts.URL, Path: CompletionsPath, Model: "m", APIKey: "sk-test"}
	o := c.Do(context.Background(), Request{PromptIDs: ids(2), PromptLen: 2, OutputLen: 2})
	if got != "Bearer sk-test" || o.Success || o.Error != "HTTP 401: authentication_error: Invalid API Key" {
		t.Fatalf("auth header %q, output %+v", got, o)
	}
	if _, err := c.FirstModel(context.Background()); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("FirstModel on 401: %v", err)
	}
}

// TestNotStreamed: a server that ignores "stream": true fails the request
// with a message that says so.
func TestNotStreamed(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"text":"whole answer"}],"usage":{"completion_tokens":2}}`))
	}))
	defer ts.Close()
	c := &Client{BaseURL: ts.URL, Path: CompletionsPath, Model: "m"}
	o := c.Do(context.Background(), Request{PromptIDs: ids(2), PromptLen: 2, OutputLen: 2})
	if o.Success || !strings.Contains(o.Error, "not streamed") {
		t.Fatalf("%+v", o)
	}
}
