package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kiln/server"
)

// Denial of service through structured output (issue 20): the sizes are
// those of the report, which took an unprotected server from 17 MB to
// 1.2 GB with one request and stalled every stream for seconds with two.

// enumBody is a completion request whose guided_json is an enum of n
// distinct strings of length letters (n=10000, length=500: the report's
// 5 MB request).
func enumBody(n, length, seed int) string {
	vals := make([]string, n)
	x := uint32(seed*7919 + 1)
	for i := range vals {
		b := make([]byte, length)
		for j := range b {
			x = x*1664525 + 1013904223
			b[j] = 'a' + byte(x>>24)%26
		}
		vals[i] = string(b)
	}
	enum, _ := json.Marshal(vals)
	return fmt.Sprintf(`{"model":"tiny","prompt":"a","max_tokens":2,"guided_json":{"enum":%s}}`, enum)
}

// heapPeak samples the live heap every millisecond until stop is called
// and returns the largest value over the baseline taken at the start.
func heapPeak() (stop func() int64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 { metrics.Read(sample); return int64(sample[0].Value.Uint64()) }
	base := read()
	var peak atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := read() - base; v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 { close(done); <-finished; return peak.Load() }
}

// postAll posts bodies at once and returns their statuses and bodies.
func postAll(t *testing.T, ts *testServer, bodies []string) ([]int, [][]byte) {
	codes, outs := make([]int, len(bodies)), make([][]byte, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Go(func() { codes[i], _, outs[i] = ts.post(t, "/v1/completions", b) })
	}
	wg.Wait()
	return codes, outs
}

// Four 5 MB enums at once and four enums of 250 KB (just under the text
// limit, far over the compile budget): every one a 400 naming the limit,
// and the heap stays within a small multiple of the budget where it used
// to reach 3.4 GB.
func TestHostileGrammarMemory(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	huge := enumBody(10000, 500, 1)
	if len(huge) < 5_000_000 {
		t.Fatalf("the huge body is %d bytes", len(huge))
	}
	for _, c := range []struct {
		name   string
		bodies []string
		want   string // in the message
		peak   int64  // bytes of heap growth allowed
	}{
		// The bodies themselves (4 × 5 MB, read once and their guided_json
		// copied once) are all of it: 42 MiB measured.
		{"4 × 5 MB enum", []string{huge, huge, huge, huge}, "--max-grammar-bytes", 80 << 20},
		// One compilation at a time on 2 cores (half the cores), each
		// stopped at its budget of 64 MiB of estimated peak heap: 73 MiB
		// measured.
		{"4 × 250 KB enum", []string{enumBody(2400, 100, 1), enumBody(2400, 100, 2), enumBody(2400, 100, 3), enumBody(2400, 100, 4)},
			"memory", int64(max(1, runtime.GOMAXPROCS(0)/2))*96<<20 + 32<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			stop := heapPeak()
			start := time.Now()
			codes, outs := postAll(t, ts, c.bodies)
			peak := stop()
			for i, code := range codes {
				if code != http.StatusBadRequest {
					t.Fatalf("request %d: status %d: %.300s", i, code, outs[i])
				}
				msg, _, param, ecode := errorOf(t, outs[i])
				if !strings.Contains(msg, c.want) || param == nil || *param != "guided_json" || ecode == nil || *ecode != "grammar_too_large" {
					t.Fatalf("request %d: %s (param %v code %v)", i, msg, param, ecode)
				}
			}
			t.Logf("%s: 400s in %v, heap peak +%.1f MiB", c.name, time.Since(start).Round(time.Millisecond), float64(peak)/(1<<20))
			if peak > c.peak {
				t.Fatalf("heap grew %.1f MiB, want at most %d MiB", float64(peak)/(1<<20), c.peak>>20)
			}
		})
	}
	// A refusal is remembered: the retry is a lookup (well under the
	// ~100 ms of compiling to the budget on this machine's cores).
	body := enumBody(2400, 100, 1)
	start := time.Now()
	if code, _, out := ts.post(t, "/v1/completions", body); code != http.StatusBadRequest {
		t.Fatalf("retry: %d %s", code, out)
	}
	if d := time.Since(start); d > 50*time.Millisecond && !raceDetector {
		t.Fatalf("the retry of a refused grammar took %v: compiled again?", d)
	}
}

// Eight different grammars of ~1 MiB each under a 4 MiB cache: the cache
// reports at most 4 MiB in /metrics, and the heap after a GC holds no more
// than that (the report's 8 × 1 MB enums held 1.27 GB).
func TestHostileGrammarCacheBytes(t *testing.T) {
	const cacheBytes = 4 << 20
	ts := start(t, server.Config{GrammarCacheMemory: cacheBytes}, nil)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range 8 {
		if code, _, out := ts.post(t, "/v1/completions", enumBody(400, 60, i)); code != http.StatusOK {
			t.Fatalf("grammar %d: %d %s", i, code, out)
		}
	}
	code, out := ts.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatal(code)
	}
	var cached, entries float64 = -1, -1
	for line := range strings.Lines(string(out)) {
		fmt.Sscanf(line, "kiln:grammar_cache_bytes %g", &cached)
		fmt.Sscanf(line, "kiln:grammar_cache_entries %g", &entries)
	}
	if cached <= 0 || cached > cacheBytes || entries < 1 || entries >= 8 {
		t.Fatalf("grammar cache: %g bytes in %g entries, want (0, %d] bytes and some of the 8 evicted", cached, entries, cacheBytes)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("cache %.2f MiB in %g entries; heap +%.2f MiB", cached/(1<<20), entries, float64(grown)/(1<<20))
	if grown > 3*cacheBytes {
		t.Fatalf("heap grew %.1f MiB with a %d MiB grammar cache", float64(grown)/(1<<20), cacheBytes>>20)
	}
}

// Streams keep decoding while two grammars compile to the edge of the
// budget and two more are refused at it: the worst gap between a stream's
// tokens stays under a second (it was 5-7 s).
func TestHostileGrammarGap(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	stop := make(chan struct{})
	var worst time.Duration
	var tokens int
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest("POST", ts.URL+"/v1/completions",
				strings.NewReader(`{"model":"tiny","prompt":"a","max_tokens":200,"ignore_eos":true,"stream":true}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			var last time.Time
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if !strings.HasPrefix(sc.Text(), "data: {") {
					continue
				}
				now := time.Now()
				if !last.IsZero() {
					worst = max(worst, now.Sub(last))
				}
				last = now
				tokens++
			}
			resp.Body.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	// 1000 × 100 letters compiles just within the 64 MiB budget; 2400 × 100
	// passes it.
	codes, outs := postAll(t, ts, []string{enumBody(1000, 100, 11), enumBody(1000, 100, 12), enumBody(2400, 100, 13), enumBody(2400, 100, 14)})
	time.Sleep(200 * time.Millisecond)
	close(stop)
	<-streamed
	for i, want := range []int{200, 200, 400, 400} {
		if codes[i] != want {
			t.Fatalf("grammar %d: status %d, want %d: %.300s", i, codes[i], want, outs[i])
		}
	}
	t.Logf("%d streamed tokens, worst gap %v", tokens, worst)
	if tokens < 100 || worst >= time.Second {
		t.Fatalf("%d tokens streamed, worst gap %v while grammars compiled: want under 1s", tokens, worst)
	}
}
