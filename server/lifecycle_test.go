package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"kiln/engine"
	"kiln/hub"
	"kiln/server"
)

// scrape reads /metrics into families by name.
func (ts *testServer) scrape(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := ts.get(t, "/metrics")
	if status != 200 {
		t.Fatalf("/metrics: %d", status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// value is the one sample of a family whose labels include want.
func value(t testing.TB, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
	var out []float64
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		ok := true
		for i := 0; i+1 < len(want); i += 2 {
			ok = ok && labels[want[i]] == want[i+1]
		}
		if !ok {
			continue
		}
		switch {
		case m.Gauge != nil:
			out = append(out, m.Gauge.GetValue())
		case m.Counter != nil:
			out = append(out, m.Counter.GetValue())
		case m.Histogram != nil:
			out = append(out, float64(m.Histogram.GetSampleCount()))
		}
	}
	if len(out) != 1 {
		t.Fatalf("%s%v: %d samples", name, want, len(out))
	}
	return out[0]
}

// idle waits until the model runs nothing and holds no KV blocks.
func (ts *testServer) idle(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		fams := ts.scrape(t)
		if value(t, fams, "vllm:num_requests_running", "model_name", "tiny") == 0 &&
			value(t, fams, "vllm:num_requests_waiting", "model_name", "tiny") == 0 &&
			value(t, fams, "vllm:kv_cache_usage_perc", "model_name", "tiny") == 0 {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("the model is still busy: running %v, waiting %v, KV %v",
				value(t, fams, "vllm:num_requests_running", "model_name", "tiny"), value(t, fams, "vllm:num_requests_waiting", "model_name", "tiny"),
				value(t, fams, "vllm:kv_cache_usage_perc", "model_name", "tiny"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const longBody = `{"model":"tiny","prompt":"go on and on","max_tokens":4000,"ignore_eos":true,"temperature":0`

// openStream starts a long streaming completion and returns its response
// once the first chunk has arrived.
func (ts *testServer) openStream(t testing.TB, ctx context.Context, extra string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/completions", strings.NewReader(longBody+`,"stream":true`+extra+`}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("first line %q, %v", line, err)
	}
	return resp, r
}

// TestDisconnectAborts: a client that goes away, streaming or not, has
// its request aborted and its KV blocks freed.
func TestDisconnectAborts(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	resp, _ := ts.openStream(t, ctx, "")
	cancel()
	resp.Body.Close()
	ts.idle(t)
	ts.waitAborted(t, 1)

	// Not streaming: the client gives up before the answer.
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/completions", strings.NewReader(longBody+`}`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the long request finished within 100ms: %d", resp.StatusCode)
	}
	ts.idle(t)
	ts.waitAborted(t, 2)
}

// waitAborted waits until n aborts are counted: the handler counts a
// request's end after the engine has freed its blocks, so idle can come
// first.
func (ts *testServer) waitAborted(t *testing.T, n float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		fams := ts.scrape(t)
		if f := fams["vllm:request_success_total"]; f != nil {
			for _, m := range f.Metric {
				if hasLabel(m, "finished_reason", "abort") && m.Counter.GetValue() == n {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v aborted requests never counted", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestQueueFull: with one running slot, one request may wait; the next
// gets 429 with Retry-After, and the queue place comes back afterwards.
func TestQueueFull(t *testing.T) {
	ts := start(t, server.Config{MaxQueue: 1}, &loader{cfg: engine.Config{MaxSeqs: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, _ := ts.openStream(t, ctx, "") // running
	defer resp.Body.Close()
	waiting := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/completions", strings.NewReader(longBody+`}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			waiting <- 0
			return
		}
		resp.Body.Close()
		waiting <- resp.StatusCode
	}()
	deadline := time.Now().Add(5 * time.Second)
	for value(t, ts.scrape(t), "vllm:num_requests_waiting", "model_name", "tiny") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the second request never queued")
		}
		time.Sleep(5 * time.Millisecond)
	}
	status, h, body := ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"x","max_tokens":1}`)
	if status != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("third request: %d (Retry-After %q) %s; want 429 with Retry-After", status, h.Get("Retry-After"), body)
	}
	errorOf(t, body)
	cancel()
	<-waiting
	ts.idle(t)
	if status, _, body := ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"x","max_tokens":1}`); status != 200 {
		t.Fatalf("after the load: %d %s", status, body)
	}
}

// TestShutdownDrains: in-flight requests finish within the drain time;
// new connections are refused; past the timeout the rest are cut.
func TestShutdownDrains(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	req, _ := http.NewRequest("POST", ts.URL+"/v1/completions", strings.NewReader(`{"model":"tiny","prompt":"a","max_tokens":300,"ignore_eos":true,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		shut <- ts.Shutdown(ctx)
	}()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.HasSuffix(string(body), "data: [DONE]\n\n") || !strings.Contains(string(body), `"finish_reason":"length"`) {
		t.Fatalf("the in-flight stream did not finish whole: %v, ends %q", err, tail(string(body)))
	}
	if err := <-shut; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if _, err := http.Get(ts.URL + "/health"); err == nil {
		t.Errorf("the server still accepts connections after Shutdown")
	}
}

// TestShutdownCuts: past the drain time a stream is cut, and ends as a
// stream should, with an error event naming the shutdown and "data:
// [DONE]"; the access log says it was cut, not that the client left.
func TestShutdownCuts(t *testing.T) {
	var logs syncBuf
	ts := start(t, server.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil)
	resp, r := ts.openStream(t, context.Background(), "")
	defer resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := ts.Shutdown(ctx); err == nil {
		t.Errorf("Shutdown reported a clean drain while a 4000-token stream ran")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Shutdown took %v after its 100ms drain", d)
	}
	rest, _ := io.ReadAll(r) // the stream ends (cut), it does not hang
	if !strings.HasSuffix(string(rest), "data: [DONE]\n\n") || !strings.Contains(string(rest), `"code":"shutting_down"`) {
		t.Errorf("the cut stream ends %q; want a shutting_down error event, then data: [DONE]", tail(string(rest)))
	}
	if l := logs.String(); !strings.Contains(l, "cut_by_shutdown=true") || strings.Contains(l, "client_gone=true") {
		t.Errorf("access log:\n%s\nwant the stream logged cut_by_shutdown=true, not client_gone=true", l)
	}
}

// syncBuf is a bytes.Buffer safe for the server's log writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func tail(s string) string {
	if len(s) > 200 {
		return s[len(s)-200:]
	}
	return s
}

// TestKeepAliveAndEviction: an idle model is unloaded after keep-alive and
// loads again on use; with one model slot, using another unloads the idle
// one, and a busy one makes the other's request wait with 503.
func TestKeepAliveAndEviction(t *testing.T) {
	path, err := tinyPath()
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.gguf")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := start(t, server.Config{KeepAlive: 200 * time.Millisecond,
		Models: []server.Source{{Name: "tiny", Path: path}, {Name: "other", Path: other}}}, nil)
	ok := func(model string) {
		t.Helper()
		if status, _, body := ts.post(t, "/v1/completions", `{"model":"`+model+`","prompt":"x","max_tokens":2}`); status != 200 {
			t.Fatalf("%s: %d %s", model, status, body)
		}
	}
	ok("tiny")
	if n := ts.loader.count(); n != 1 {
		t.Fatalf("%d loads, want 1", n)
	}
	ok("other") // one slot: tiny (idle) makes room
	if n := ts.loader.count(); n != 2 {
		t.Fatalf("%d loads, want 2", n)
	}
	if got := loadedModels(t, ts); got != "other" {
		t.Errorf("loaded %q, want other", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for loadedModels(t, ts) != "" {
		if time.Now().After(deadline) {
			t.Fatal("keep-alive never unloaded the idle model")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A busy model is never unloaded for another: 503 with Retry-After.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, _ := ts.openStream(t, ctx, "")
	defer resp.Body.Close()
	status, h, body := ts.post(t, "/v1/completions", `{"model":"other","prompt":"x","max_tokens":2}`)
	if status != 503 || h.Get("Retry-After") == "" {
		t.Fatalf("other while tiny streams: %d (Retry-After %q) %s", status, h.Get("Retry-After"), body)
	}
	cancel()
}

// loadedModels lists the loaded models' ids from /v1/models.
func loadedModels(t *testing.T, ts *testServer) string {
	t.Helper()
	_, body := ts.get(t, "/v1/models")
	var list struct {
		Data []struct {
			ID     string `json:"id"`
			Loaded bool   `json:"loaded"`
		} `json:"data"`
	}
	if err := jsonUnmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range list.Data {
		if m.Loaded {
			out = append(out, m.ID)
		}
	}
	return strings.Join(out, ",")
}

// TestHubModels: a `kiln list` reference already in the cache is served
// by its exact name; any other hf: name is unknown (never downloaded).
func TestHubModels(t *testing.T) {
	path, err := tinyPath()
	if err != nil {
		t.Fatal(err)
	}
	ts := start(t, server.Config{Models: []server.Source{}, HubList: func() ([]hub.Manifest, error) {
		return []hub.Manifest{{Ref: "hf:someone/tiny-GGUF/tiny-Q8_0.gguf", Path: path}}, nil
	}}, nil)
	if status, _, body := ts.post(t, "/v1/completions", `{"model":"hf:someone/tiny-GGUF/tiny-Q8_0.gguf","prompt":"x","max_tokens":2}`); status != 200 {
		t.Fatalf("cached reference: %d %s", status, body)
	}
	for _, name := range []string{"hf:someone/tiny-GGUF/other.gguf", "hf:someone/tiny-GGUF:Q8_0", path} {
		if status, _, body := ts.post(t, "/v1/completions", `{"model":"`+name+`","prompt":"x","max_tokens":2}`); status != 404 {
			t.Errorf("%s: %d %s, want 404", name, status, body)
		}
	}
	if !strings.Contains(loadedModels(t, ts), "hf:someone/tiny-GGUF/tiny-Q8_0.gguf") {
		t.Errorf("/v1/models does not list the cached reference as loaded")
	}
}

// TestLoadFailureRemembered: a model that fails to load answers each
// request 500 model_load_failed without loading again; once the file is
// replaced, the next request loads it.
func TestLoadFailureRemembered(t *testing.T) {
	good, err := tinyPath()
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.gguf")
	if err := os.WriteFile(broken, []byte("not a GGUF file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := start(t, server.Config{Models: []server.Source{{Name: "broken", Path: broken}}}, nil)
	for range 3 {
		status, _, body := ts.post(t, "/v1/completions", `{"model":"broken","prompt":"x","max_tokens":2}`)
		if _, _, _, code := errorOf(t, body); status != 500 || code == nil || *code != "model_load_failed" {
			t.Fatalf("broken model: %d %s", status, body)
		}
	}
	if n := ts.loader.count(); n != 1 {
		t.Errorf("%d loads of the broken file for 3 requests, want 1", n)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if status, _, body := ts.post(t, "/v1/completions", `{"model":"broken","prompt":"x","max_tokens":2}`); status != 200 {
		t.Fatalf("after the file was replaced: %d %s", status, body)
	}
	if n := ts.loader.count(); n != 2 {
		t.Errorf("%d loads, want 2", n)
	}
}

// TestServeAfterShutdown: a Serve that starts after Shutdown (a test that
// only used the Handler, its server goroutine scheduled late) returns at
// once instead of serving for ever; found as a hang in CI's fuzz targets'
// cleanup.
func TestServeAfterShutdown(t *testing.T) {
	s, err := server.New(server.Config{Load: (&loader{}).load})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	select {
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("Serve after Shutdown: %v, want http.ErrServerClosed", err)
		}
	case <-time.After(5 * time.Second):
		ln.Close()
		t.Fatal("Serve after Shutdown did not return")
	}
}
