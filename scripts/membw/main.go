// Command membw measures this machine's read bandwidth, the roofline of a
// decode step (every weight byte it needs read once from memory): N
// goroutines each sum their share of a buffer far larger than the caches,
// several passes, and the best pass is printed in GB/s (1e9 bytes).
//
//	go run ./scripts/membw [-threads 2] [-mib 1024] [-passes 5] [-json]
//
// scripts/bench-peers.sh runs it to give kiln's decode as a share of it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

func main() {
	threads := flag.Int("threads", runtime.NumCPU(), "goroutines reading at once")
	mib := flag.Int("mib", 1024, "buffer size in MiB (well above the last-level cache)")
	passes := flag.Int("passes", 5, "passes over the buffer; the best is reported")
	asJSON := flag.Bool("json", false, `print {"read_gb_s":..,"threads":..,"mib":..}`)
	flag.Parse()
	if *threads < 1 || *mib < 1 || *passes < 1 {
		fmt.Fprintln(os.Stderr, "membw: -threads, -mib and -passes must be positive")
		os.Exit(2)
	}
	buf := make([]uint64, *mib<<20/8)
	for i := range buf { // touch every page before timing
		buf[i] = uint64(i)
	}
	best := 0.0
	var sink uint64
	for range *passes {
		var wg sync.WaitGroup
		sums := make([]uint64, *threads)
		t := time.Now()
		for g := range *threads {
			wg.Add(1)
			go func(part []uint64) {
				defer wg.Done()
				sums[g] = sum(part)
			}(buf[g*len(buf) / *threads : (g+1)*len(buf) / *threads])
		}
		wg.Wait()
		best = max(best, float64(len(buf)*8)/time.Since(t).Seconds()/1e9)
		for _, s := range sums {
			sink += s
		}
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(map[string]any{"read_gb_s": float64(int(best*10+0.5)) / 10, "threads": *threads, "mib": *mib, "sink": sink % 2})
		return
	}
	fmt.Printf("read bandwidth: %.1f GB/s (%d threads, %d MiB, best of %d passes)\n", best, *threads, *mib, *passes)
}

// sum adds part as four streams read side by side (its four quarters),
// each in its own chain: four sequential streams keep more cache misses in
// flight than one (a single stream is latency-bound, below what kiln's
// prefetching kernels read), and the loads, not the adds, bound the loop.
func sum(part []uint64) uint64 {
	q := len(part) / 4
	a, b, c, d := part[:q], part[q:2*q], part[2*q:3*q], part[3*q:4*q]
	var s0, s1, s2, s3 uint64
	for i := 0; i+2 <= q; i += 2 {
		s0 += a[i] + a[i+1]
		s1 += b[i] + b[i+1]
		s2 += c[i] + c[i+1]
		s3 += d[i] + d[i+1]
	}
	if q%2 == 1 {
		s0 += a[q-1] + b[q-1] + c[q-1] + d[q-1]
	}
	for _, x := range part[4*q:] {
		s0 += x
	}
	return s0 + s1 + s2 + s3
}
