package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkStreamedRequest: one streamed request of 16 SSE events (the
// replica flushes each), straight to the fake replica and through the proxy
// with the in-process fake EPP, one at a time. ttft-µs is the time to the
// first event, ns/op the whole request; the difference between the two
// sub-benchmarks is the proxy's own cost (ext_proc streaming, one round trip
// per chunk), not the real EPP's scheduling work.
func BenchmarkStreamedRequest(b *testing.B) {
	replica := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 16 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\"tok%d\"}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
	h := newHarness(b, newFakeEPP(), replica)
	h.proxy.Logf = func(string, ...any) {}
	go func() {
		for range h.epp.frames {
		}
	}()
	go func() {
		for range h.epp.ended {
		}
	}()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for _, target := range []struct{ name, url string }{{"direct", "http://" + h.upstream}, {"proxy", h.url}} {
		b.Run(target.name, func(b *testing.B) {
			var ttft time.Duration
			for b.Loop() {
				start := time.Now()
				resp, err := client.Post(target.url+"/v1/completions", "application/json", strings.NewReader(`{"model":"m","prompt":"p","stream":true}`))
				if err != nil {
					b.Fatal(err)
				}
				br := bufio.NewReader(resp.Body)
				if _, err := br.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				ttft += time.Since(start)
				io.Copy(io.Discard, br)
				resp.Body.Close()
			}
			b.ReportMetric(float64(ttft.Microseconds())/float64(b.N), "ttft-µs")
		})
	}
}
