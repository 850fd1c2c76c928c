package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kiln/engine"
	"kiln/server"
)

// TestSoak: 256 concurrent clients of random lengths, streaming and not,
// a third of them disconnecting at random moments, for KILN_SOAK (default
// 30s; scripts/soak.sh runs 10m). Every completed response must be well
// formed, the only errors the expected 429s; afterwards the KV cache is
// empty, nothing runs or waits, goroutines are back to their baseline,
// and RSS (sampled each second, written to KILN_SOAK_OUT as CSV) is flat:
// the median of its last window (a minute, or a sixth of a shorter run) is
// within rssSlack of the median of its first after a warm-up.
func TestSoak(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("soak: skipped under -short and -race")
	}
	dur := 30 * time.Second
	if v := os.Getenv("KILN_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("KILN_SOAK=%q: %v", v, err)
		}
		dur = d
	}
	ts := start(t, server.Config{MaxQueue: 96}, &loader{cfg: engine.Config{MaxSeqs: 32, NumBlocks: 1024}})
	if err := ts.Preload(context.Background()); err != nil {
		t.Fatal(err)
	}
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = 256
	runtime.GC()
	baseline := runtime.NumGoroutine()

	var completed, disconnected, rejected, failures atomic.Int64
	var mu sync.Mutex
	var firstFailures []string
	fail := func(format string, args ...any) {
		failures.Add(1)
		mu.Lock()
		if len(firstFailures) < 10 {
			firstFailures = append(firstFailures, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	stop := time.Now().Add(dur)
	rss := []string{"seconds,rss_kib,goroutines"}
	var underLoad []int64 // RSS samples (KiB) taken while the clients run
	sampler := time.NewTicker(time.Second)
	defer sampler.Stop()
	t0 := time.Now()
	sample := func() int64 {
		kib := vmRSS()
		rss = append(rss, fmt.Sprintf("%.0f,%d,%d", time.Since(t0).Seconds(), kib, runtime.NumGoroutine()))
		return kib
	}
	sample()
	var wg sync.WaitGroup
	for c := range 256 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			quitter := c%3 == 0
			for time.Now().Before(stop) {
				stream := rng.IntN(4) != 0
				chat := rng.IntN(2) == 0
				maxTok := 1 + rng.IntN(120)
				words := strings.Repeat("word ", 1+rng.IntN(60))
				var path, body string
				if chat {
					path = "/v1/chat/completions"
					body = fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":%q}],"max_tokens":%d,"temperature":%.2f,"stream":%t}`, words, maxTok, rng.Float64(), stream)
				} else {
					path = "/v1/completions"
					body = fmt.Sprintf(`{"model":"tiny","prompt":%q,"max_tokens":%d,"temperature":%.2f,"stream":%t,"stream_options":{"include_usage":true}}`, words, maxTok, rng.Float64(), stream)
				}
				ctx, cancel := context.WithCancel(context.Background())
				if quitter && rng.IntN(2) == 0 {
					time.AfterFunc(time.Duration(rng.IntN(400))*time.Millisecond, cancel)
				}
				req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+path, strings.NewReader(body))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					cancel()
					if ctx.Err() != nil {
						disconnected.Add(1)
					} else {
						fail("%s: %v", path, err)
					}
					continue
				}
				b, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case ctx.Err() != nil:
					disconnected.Add(1)
				case resp.StatusCode == http.StatusTooManyRequests:
					rejected.Add(1)
					if resp.Header.Get("Retry-After") == "" {
						fail("429 without Retry-After")
					}
					time.Sleep(time.Duration(50+rng.IntN(200)) * time.Millisecond)
				case rerr != nil || resp.StatusCode != 200:
					fail("%s: %d %v %.200s", path, resp.StatusCode, rerr, b)
				case stream:
					if err := wellFormedStream(b, maxTok); err != nil {
						fail("%s stream: %v", path, err)
					} else {
						completed.Add(1)
					}
				default:
					if err := wellFormedWhole(b, maxTok); err != nil {
						fail("%s: %v", path, err)
					} else {
						completed.Add(1)
					}
				}
				cancel()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-sampler.C:
			underLoad = append(underLoad, sample())
		}
	}
	fams := ts.idle(t)
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > baseline+8 && time.Now().Before(deadline) {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		time.Sleep(50 * time.Millisecond)
	}
	sample()
	t.Logf("soak %v: %d completed, %d disconnected, %d rejected (429), %d failures; goroutines %d -> %d; generated %v tokens",
		dur, completed.Load(), disconnected.Load(), rejected.Load(), failures.Load(), baseline, runtime.NumGoroutine(),
		value(t, fams, "vllm:generation_tokens_total", "model_name", "tiny"))
	t.Logf("RSS curve (seconds,KiB,goroutines): %s", strings.Join(rss[1:], " "))
	if out := os.Getenv("KILN_SOAK_OUT"); out != "" {
		os.WriteFile(out, []byte(strings.Join(rss, "\n")+"\n"), 0o644)
	}
	if failures.Load() > 0 {
		t.Errorf("%d failures, first: %s", failures.Load(), strings.Join(firstFailures, "\n"))
	}
	if completed.Load() == 0 || disconnected.Load() == 0 {
		t.Errorf("the soak completed %d and disconnected %d requests: both should happen", completed.Load(), disconnected.Load())
	}
	checkRSSFlat(t, underLoad, dur)
	if g := runtime.NumGoroutine(); g > baseline+8 {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines %d after the load, baseline %d:\n%s", g, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// rssSlack is how much the soak's RSS may grow from its first window to
// its last. The heap grows to its working size over the first seconds
// (25 MiB idle, 108 MiB after 1 s, 117 MiB after 5 s), so the first window
// starts after two windows of warm-up. Measured on the 30 s CI run (Intel
// Xeon family 6 model 207, 2 vCPUs shared), windows of 5 s, three runs: medians 118.2 ->
// 119.3 MiB (+1.0%), 118.5 -> 120.1 MiB (+1.3%), 118.1 -> 121.0 MiB
// (+2.5%). 8% is about 3x the worst: over the ~10,000 requests between the
// windows it catches a leak of about 1 KiB per request, and over
// scripts/soak.sh's 10 minutes far less.
const rssSlack = 0.08

// checkRSSFlat fails when the median RSS of the last window of samples
// exceeds the first window's by more than rssSlack. The window is a minute
// of one-second samples, or a sixth of a shorter run (5 s in CI's 30 s);
// the first window follows two windows of warm-up.
func checkRSSFlat(t *testing.T, kib []int64, dur time.Duration) {
	t.Helper()
	w := min(60, int(dur/time.Second)/6)
	if w < 3 || len(kib) < 4*w {
		t.Logf("RSS: %d samples, too few to compare windows of %d after a warm-up", len(kib), w)
		return
	}
	// Two windows of warm-up: on a loaded machine (CI runs two test
	// binaries at once) the heap reaches its working size later, and a
	// first window taken while it still grows read as a leak (seen once).
	first, last := medianKiB(kib[2*w:3*w]), medianKiB(kib[len(kib)-w:])
	t.Logf("RSS median: seconds %d-%d %d KiB, last %ds %d KiB (%+.1f%%)", 2*w+1, 3*w, first, w, last, 100*(float64(last)/float64(first)-1))
	if float64(last) > float64(first)*(1+rssSlack) {
		t.Errorf("RSS grew from %d KiB (median of seconds %d-%d) to %d KiB (the last %ds): more than %.0f%%, a leak under load",
			first, 2*w+1, 3*w, last, w, 100*rssSlack)
	}
}

func medianKiB(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// wellFormedStream checks an SSE body: framing, chunks that parse, one
// finish_reason, [DONE] last, usage (when asked) consistent.
func wellFormedStream(b []byte, maxTok int) error {
	if !sseFraming.Match(b) {
		return fmt.Errorf("framing: %.300q", b)
	}
	finishes := 0
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		var chunk struct {
			Error   any `json:"error"`
			Choices []struct {
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &chunk); err != nil {
			return fmt.Errorf("chunk %q: %v", line, err)
		}
		if chunk.Error != nil {
			return fmt.Errorf("error chunk %s", line)
		}
		for _, c := range chunk.Choices {
			if c.FinishReason != nil {
				finishes++
			}
		}
		if chunk.Usage != nil && (chunk.Usage.CompletionTokens < 1 || chunk.Usage.CompletionTokens > maxTok) {
			return fmt.Errorf("usage %s with max_tokens %d", line, maxTok)
		}
	}
	if finishes != 1 {
		return fmt.Errorf("%d finish reasons", finishes)
	}
	return nil
}

func wellFormedWhole(b []byte, maxTok int) error {
	var r struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	if len(r.Choices) != 1 || (r.Choices[0].FinishReason != "stop" && r.Choices[0].FinishReason != "length") ||
		r.Usage.CompletionTokens < 1 || r.Usage.CompletionTokens > maxTok {
		return fmt.Errorf("response %.300s", b)
	}
	return nil
}

// vmRSS is this process's resident set in KiB (Linux; 0 elsewhere).
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
