package local

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// streamEvents sends a streaming completion to port (the proxy's or a
// replica's) and reads its
// SSE events, calling each (if not nil) with the event's data line and the
// time since the request was sent; it returns the number of data events.
func (p *pool) streamEvents(t *testing.T, ctx context.Context, port, maxTokens int, each func(data string, at time.Duration)) int {
	t.Helper()
	body := fmt.Sprintf(`{"model":"stories","prompt":"Once upon a time","max_tokens":%d,"ignore_eos":true,"stream":true}`, maxTokens)
	req, _ := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("http://127.0.0.1:%d/v1/completions", port), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || (port == p.proxy && resp.Header.Get("x-gateway-destination-endpoint") == "") {
		t.Fatalf("port %d: %d, content-type %q, destination %q", port, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("x-gateway-destination-endpoint"))
	}
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		n++
		if each != nil {
			each(data, time.Since(start))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return n
}

// TestStreamingThroughProxy: a streamed completion through
// kiln-extproc-proxy reaches the client while the replica still generates it
// (64 tokens: the first event before the last, in more than one read; 400
// tokens: the replica still runs it at the first event), and the picker's request accounting follows the
// request's whole life: llm_d_epp_request_running counts it while it
// streams and returns to zero when it completes, and the picker records a
// TTFT and inter-token latencies for it (which it only does on seeing the
// response's chunks and end_of_stream over ext_proc).
func TestStreamingThroughProxy(t *testing.T) {
	p := startPool(t, 1, "load", "")
	model := `model_name="stories"`
	running := func() float64 { v, _ := p.eppMetric("llm_d_epp_request_running", model); return v }
	ttfts := func() float64 {
		v, _ := p.eppMetric("llm_d_epp_request_ttft_seconds_count", model, `streaming="true"`)
		return v
	}
	itls := func() float64 { v, _ := p.eppMetric("llm_d_epp_request_streaming_itl_seconds_count", model); return v }

	p.streamEvents(t, context.Background(), p.proxy, 16, nil) // warm-up: the first request's one-time costs
	// Chunk by chunk: the arrival times of 64 token events (and the final
	// ones: finish reason, [DONE]) through the proxy, in bursts (events less
	// than 200 µs apart came in one read). A buffering proxy delivers them
	// all at once, one burst; the same request straight to the replica is
	// logged for comparison.
	events := func(port int) (times []time.Duration, bursts []int) {
		n := p.streamEvents(t, context.Background(), port, 64, func(_ string, at time.Duration) {
			if len(times) == 0 || at-times[len(times)-1] > 200*time.Microsecond {
				bursts = append(bursts, 0)
			}
			bursts[len(bursts)-1]++
			times = append(times, at)
		})
		if n < 65 {
			t.Fatalf("%d events, want at least 64 tokens and [DONE]", n)
		}
		return times, bursts
	}
	direct, db := events(p.replicas[0])
	proxied, pb := events(p.proxy)
	t.Logf("64 tokens: direct first event at %v, last at %v, bursts %v; through the proxy first at %v, last at %v, bursts %v",
		direct[0], direct[len(direct)-1], db, proxied[0], proxied[len(proxied)-1], pb)
	// Tokens that kiln writes faster than they are read come in one write
	// (see the direct bursts), so burst counts vary with load; a proxy that
	// held the whole response would give one burst.
	if len(pb) < 2 {
		t.Errorf("through the proxy all events came at once (first at %v, last at %v): want them streamed", proxied[0], proxied[len(proxied)-1])
	}

	// In flight: at the first event of a long stream, the replica is still
	// generating it (the client did not wait for the whole response) and
	// the picker counts it as running.
	base, baseITL := ttfts(), itls() // the warm-up and the 64 tokens above count too
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var atFirst, replicaAtFirst float64 = -1, -1
	p.streamEvents(t, ctx, p.proxy, 400, func(data string, _ time.Duration) {
		if atFirst < 0 {
			replicaAtFirst = p.replicaMetric(t, "vllm:num_requests_running")
			waitFor(5*time.Second, func() bool { return running() >= 1 })
			atFirst = running()
		}
	})
	t.Logf("at the first event of a 400-token stream: the replica runs %v request(s), the picker counts %v", replicaAtFirst, atFirst)
	if replicaAtFirst < 1 {
		t.Errorf("the first event of a 400-token stream reached the client after the replica had finished it: want it streamed")
	}
	if atFirst < 1 {
		t.Errorf("llm_d_epp_request_running was %v while a request streamed; want 1", atFirst)
	}
	// Completed: back to zero, and one more TTFT observed.
	if !waitFor(5*time.Second, func() bool { return running() == 0 }) {
		t.Errorf("llm_d_epp_request_running is %v after the stream completed; want 0", running())
	}
	for range 3 {
		p.streamEvents(t, context.Background(), p.proxy, 16, nil)
	}
	if !waitFor(5*time.Second, func() bool { return running() == 0 && ttfts() == base+4 }) {
		t.Errorf("after 4 streamed completions: running %v (want 0), TTFT observations %v more (want 4)", running(), ttfts()-base)
	}
	// Tokens that the replica writes faster than a chunk's round trip through
	// the picker arrive together in one read (Envoy coalesces the same way),
	// so not every token is its own chunk; a proxy that buffered would give
	// one chunk per request.
	if d := itls() - baseITL; d < 20 {
		t.Errorf("%v inter-token latencies recorded for 4 streamed requests: the picker did not see their chunks one by one", d)
	}
	t.Logf("picker accounting: running %v, TTFT observations +%v, ITL observations +%v", running(), ttfts()-base, itls()-baseITL)
}

// replicaMetric reads one of replica 1's own metrics (the first series of
// name), -1 when absent.
func (p *pool) replicaMetric(t *testing.T, name string) float64 {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.replicas[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}
