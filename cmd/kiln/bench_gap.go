package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"kiln/assemble"
	"kiln/engine"
	"kiln/kernels/simd"
)

// gapWarm is how many tokens every stream of the gap workload has decoded
// before the long prompt is submitted.
const gapWarm = 8

// gapResult is the gap workload's report: streams decode; a long prompt
// arrives; how long do the streams wait between tokens while it is
// prefilled (chunked by the step budget, or whole)?
type gapResult struct {
	Engine      string  `json:"engine"`
	Workload    string  `json:"workload"`
	Threads     int     `json:"threads"`
	Streams     int     `json:"streams"`
	LongPrompt  int     `json:"long_prompt"`
	MaxBatched  int     `json:"max_batched_tokens"`
	GapBeforeMs float64 `json:"gap_before_ms"` // median inter-token gap of the streams before the long prompt
	GapMaxMs    float64 `json:"gap_max_ms"`    // worst inter-token gap of any stream while the long prompt prefills
	GapMedianMs float64 `json:"gap_median_ms"` // median gap of the streams while it prefills
	LongTTFTMs  float64 `json:"long_ttft_ms"`  // the long prompt's time to first token
	StepsDuring int64   `json:"steps_during"`  // engine steps from its submission to its first token
	Kernels     string  `json:"kernels"`
	memReport
}

// runGap runs the gap workload on a's model: streams requests of 16-token prompts
// decode gen tokens each; once each has gapWarm tokens, one request with a
// longPrompt-token prompt (and one token to generate) is submitted.
func runGap(stdout io.Writer, asJSON bool, a *assemble.Assembly, kvf *kvPoolFlags, mem memReport, streams, longPrompt, gen, maxBatched int, noPrefixCache bool) error {
	m := a.Model
	c := &m.Config
	tok := func(i int) int32 { return int32((i*7919 + 13) % c.Vocab) }
	const streamPrompt = 16
	if longPrompt+1 > c.Context || streamPrompt+gen > c.Context {
		return fmt.Errorf("a %d-token prompt (or %d + --gen %d) exceeds the model's context of %d", longPrompt, streamPrompt, gen, c.Context)
	}
	if maxBatched == 0 {
		maxBatched = 256
	}
	e, err := startEngine(a, kvf.kv(max(longPrompt+1, streamPrompt+gen), streams+1), engine.Config{MaxSeqs: streams + 1, KVType: mem.kvType,
		MaxBatchedTokens: maxBatched, NoPrefixCache: noPrefixCache})
	if err != nil {
		return err
	}

	var mu sync.Mutex
	times := make([][]time.Time, streams)
	var warm, done sync.WaitGroup
	warm.Add(streams)
	for s := range streams {
		p := make([]int32, streamPrompt)
		for i := range p {
			p[i] = tok(s*streamPrompt + i)
		}
		ch, err := e.Submit(context.Background(), engine.Request{Prompt: p, Params: greedyParams(gen)})
		if err != nil {
			return err
		}
		done.Add(1)
		go func(s int) {
			defer done.Done()
			n := 0
			for ev := range ch {
				if ev.Token >= 0 {
					mu.Lock()
					times[s] = append(times[s], time.Now())
					mu.Unlock()
					if n++; n == gapWarm {
						warm.Done()
					}
				}
			}
			if n < gapWarm {
				warm.Done()
			}
		}(s)
	}
	warm.Wait()
	lp := make([]int32, longPrompt)
	for i := range lp {
		lp[i] = tok(1_000_003 + i)
	}
	before := e.Stats().Steps
	submitted := time.Now()
	ch, err := e.Submit(context.Background(), engine.Request{Prompt: lp, Params: greedyParams(1)})
	if err != nil {
		return err
	}
	var first time.Time
	var steps int64
	for ev := range ch {
		if ev.Token >= 0 && first.IsZero() {
			first = time.Now()
		}
		if ev.Done {
			// Counted at the final event, not the token: the engine
			// publishes its counters before a final event (Engine.end), so
			// the step that produced the one token is in them only then.
			steps = e.Stats().Steps - before
		}
		if ev.Done && ev.Reason == engine.Abort {
			return fmt.Errorf("the long request was aborted: %v", ev.Err)
		}
	}
	done.Wait()
	if first.IsZero() {
		return fmt.Errorf("the long request produced no token")
	}
	mem.afterRun(c, a.NumBlocks, a.BlockSize)

	var beforeGaps, duringGaps []float64
	for _, ts := range times {
		for i := 1; i < len(ts); i++ {
			g := float64(ts[i].Sub(ts[i-1]).Nanoseconds()) / 1e6
			switch {
			case !ts[i].After(submitted):
				beforeGaps = append(beforeGaps, g)
			case ts[i-1].Before(first):
				duringGaps = append(duringGaps, g)
			}
		}
	}
	r := gapResult{Engine: "kiln", Workload: "gap", Threads: m.Threads(), Streams: streams, LongPrompt: longPrompt,
		MaxBatched: maxBatched, LongTTFTMs: round4(float64(first.Sub(submitted).Nanoseconds()) / 1e6),
		StepsDuring: steps, Kernels: simd.Impl(), memReport: mem}
	if len(beforeGaps) > 0 {
		slices.Sort(beforeGaps)
		r.GapBeforeMs = round4(median(beforeGaps))
	}
	if len(duringGaps) > 0 {
		slices.Sort(duringGaps)
		r.GapMedianMs = round4(median(duringGaps))
		r.GapMaxMs = round4(duringGaps[len(duringGaps)-1])
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	fmt.Fprintf(stdout, "workload  gap: %d streams decoding, a %d-token prompt arrives; step budget %d tokens (%d threads, %s)\n",
		r.Streams, r.LongPrompt, r.MaxBatched, r.Threads, r.Kernels)
	fmt.Fprintf(stdout, "streams   inter-token gap %.2f ms before; while it prefills: median %.2f ms, worst %.2f ms\n",
		r.GapBeforeMs, r.GapMedianMs, r.GapMaxMs)
	fmt.Fprintf(stdout, "long      first token after %.2f ms (%d steps)\n", r.LongTTFTMs, r.StepsDuring)
	r.memReport.print(stdout)
	return nil
}

// round4 rounds to 4 decimals (0.1 us for milliseconds: a tiny model's
// steps take microseconds).
func round4(x float64) float64 { return float64(int64(x*1e4+0.5)) / 1e4 }
