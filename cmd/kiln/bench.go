package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"kiln/assemble"
	"kiln/engine"
	"kiln/kernels/simd"
)

func init() {
	register("bench", "measure prefill and decode tokens/s (the oracle's bench JSON shape)", runBench)
}

// benchResult is the oracle's bench shape plus kiln's extras.
type benchResult struct {
	Engine       string  `json:"engine"`
	Threads      int     `json:"threads"`
	Parallel     int     `json:"parallel"`
	PromptTokens int     `json:"prompt_tokens"`
	GenTokens    int     `json:"gen_tokens"`
	PrefillTokS  float64 `json:"prefill_tok_s"`
	DecodeTokS   float64 `json:"decode_tok_s"`
	ModelBytes   uint64  `json:"model_bytes"`
	// StepBytes is the weight bytes one decode step reads: ModelBytes for a
	// dense model; for a mixture of experts all but the routed experts
	// none of the step's tokens chose (model.StepBytes: exact for one
	// sequence, an upper bound for several).
	StepBytes uint64 `json:"step_bytes"`
	// DecodeGBs is weight bytes streamed per second during decode: one
	// pass over StepBytes per step, shared by all parallel sequences.
	DecodeGBs float64 `json:"decode_weight_gb_s"`
	// Kernels is the kernel set that ran (simd.Impl: avx512vnni, avx2,
	// generic; KILN_KERNELS caps it).
	Kernels string `json:"kernels"`
	// EngineOverhead is the share of the engine's step time spent outside
	// the model's forward (scheduling, batch building, sampling,
	// streaming), over the whole run.
	EngineOverhead float64 `json:"engine_overhead"`
	// PeakRunning is the most requests the engine ran at once (they all
	// held KV blocks together); Preemptions how often a request gave its
	// blocks back to be recomputed because the pool ran short.
	PeakRunning int64 `json:"peak_running"`
	Preemptions int64 `json:"preemptions"`
	memReport
	specReport
}

// prefixResult is the shared-prefix workload's report.
type prefixResult struct {
	Engine      string  `json:"engine"`
	Workload    string  `json:"workload"`
	Threads     int     `json:"threads"`
	Requests    int     `json:"requests"`
	PrefixLen   int     `json:"prefix_len"`
	SuffixLen   int     `json:"suffix_len"`
	GenTokens   int     `json:"gen_tokens"`
	PrefixCache bool    `json:"prefix_cache"`
	TTFTMedian  float64 `json:"ttft_median_ms"` // Submit to first token, median over requests
	TTFTMax     float64 `json:"ttft_max_ms"`
	TotalS      float64 `json:"total_s"`       // first Submit to last final event
	CachedTok   int     `json:"cached_tokens"` // prompt tokens served from the prefix cache, all requests
	Kernels     string  `json:"kernels"`
	memReport
}

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "serve" {
		return runBenchServe(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stdout)
	threads := fs.Int("threads", 0, "worker threads (0: one per core)")
	lt := loadTypeFlags(fs)
	prompt := fs.Int("prompt", 128, "prompt tokens to prefill (per sequence)")
	gen := fs.Int("gen", 64, "tokens to generate (per sequence)")
	parallel := fs.Int("parallel", 1, "requests submitted together (the engine batches them)")
	repeat := fs.Int("prompt-repeat", 1, "throughput workload: each prompt is a span of --prompt/N tokens repeated N times (copy-heavy text, where n-gram speculation finds drafts)")
	workload := fs.String("workload", "throughput", "throughput (prefill and decode tok/s), prefix (requests sharing a prompt prefix: time to first token) or gap (decode streams' worst inter-token gap while a long prompt is prefilled)")
	prefixLen := fs.Int("prefix-len", 1024, "prefix workload: tokens of the prompt prefix all requests share")
	suffixLen := fs.Int("suffix-len", 32, "prefix workload: tokens of each request's own prompt suffix")
	requests := fs.Int("requests", 16, "prefix workload: requests, submitted at once")
	noPrefixCache := fs.Bool("no-prefix-cache", false, "turn the engine's prefix cache off (every prompt is computed whole)")
	streams := fs.Int("streams", 8, "gap workload: requests decoding when the long prompt arrives")
	longPrompt := fs.Int("long-prompt", 2000, "gap workload: tokens of the prompt that arrives while the streams decode")
	maxBatched := fs.Int("max-batched-tokens", 0, "tokens per engine step, the chunked-prefill budget (0: max(512, --prompt); gap workload: 256)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	noRepack := fs.Bool("no-repack", false, "keep weights in the file's layout (no load-time repacking)")
	noWarmup := fs.Bool("no-warmup", false, "throughput workload: skip the untimed warm-up request (min(32, --prompt) prompt tokens, one generated), which faults in mmapped weights and the engine's buffers first, as llama-bench's warm-up does")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the timed part to this file (go tool pprof)")
	kvf := addKVPoolFlags(fs)
	kvTypeOf := kvTypeFlag(fs)
	sf := addSpecFlags(fs)
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln bench MODEL [--threads N] [--prompt 128] [--gen 64] [--parallel N] [--json] [--no-repack] [--type T [--pure]] [--spec ngram|draft [--draft MODEL] --num-speculative-tokens K]\n"+
			"       kiln bench MODEL --workload prefix [--prefix-len 1024] [--suffix-len 32] [--requests 16] [--gen 64] [--no-prefix-cache]\n"+
			"       kiln bench MODEL --workload gap [--streams 8] [--long-prompt 2000] [--max-batched-tokens 256] [--gen 96]\n")
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want one MODEL argument, got %d", len(pos))
	}
	if *prompt < 1 || *gen < 1 || *parallel < 1 {
		return usageErrorf("--prompt, --gen and --parallel must be positive")
	}
	if err := checkThreads(*threads); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	only := func(names ...string) error { // flags that the other workload does not read
		for _, n := range names {
			if set[n] {
				return usageErrorf("--%s does not apply to --workload %s", n, *workload)
			}
		}
		return nil
	}
	switch *workload {
	case "throughput":
		if err := only("prefix-len", "suffix-len", "requests", "streams", "long-prompt"); err != nil {
			return err
		}
		if *repeat < 1 || *repeat > *prompt {
			return usageErrorf("--prompt-repeat %d: want 1 up to --prompt %d", *repeat, *prompt)
		}
		if err := sf.check(); err != nil {
			return err
		}
	case "prefix":
		if err := only("prompt", "parallel", "streams", "long-prompt", "spec", "draft", "spec-adaptive", "prompt-repeat", "no-warmup"); err != nil {
			return err
		}
		if *prefixLen < 1 || *suffixLen < 1 {
			return usageErrorf("--prefix-len and --suffix-len must be positive")
		}
		if err := checkParallel(*requests); err != nil {
			return usageErrorf("--requests %d: want 1 up to %d", *requests, maxParallel)
		}
	case "gap":
		if err := only("prompt", "parallel", "prefix-len", "suffix-len", "requests", "spec", "draft", "spec-adaptive", "prompt-repeat", "no-warmup"); err != nil {
			return err
		}
		if err := checkParallel(*streams); err != nil {
			return usageErrorf("--streams %d: want 1 up to %d", *streams, maxParallel)
		}
		if *longPrompt < 1 {
			return usageErrorf("--long-prompt must be positive")
		}
		if !set["gen"] {
			*gen = 96
		}
		if *gen < gapWarm+2 {
			return usageErrorf("--gen %d: the gap workload needs at least %d tokens per stream", *gen, gapWarm+2)
		}
	default:
		return usageErrorf("--workload %q: want throughput, prefix or gap", *workload)
	}
	if *maxBatched < 0 || *maxBatched > 1<<20 {
		return usageErrorf("--max-batched-tokens %d: want 0 (the default) up to %d", *maxBatched, 1<<20)
	}
	if err := kvf.check(); err != nil {
		return err
	}
	kvType, err := kvTypeOf()
	if err != nil {
		return err
	}
	scheme, err := lt.scheme()
	if err != nil {
		return err
	}
	if err := checkType(pos[0], scheme); err != nil {
		return err
	}
	// Token ids alone: no tokenizer (the draft is checked on its vocabulary size).
	a, err := loadModel(assemble.Options{Model: pos[0], Scheme: scheme, Draft: sf.draftPath(), Threads: *threads, NoRepack: *noRepack, NoTokenizer: true}, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	m, bytes := a.Model, a.WeightBytes
	c := &m.Config
	mem := memAfterLoad(bytes, kvType)

	if *workload == "gap" {
		return runGap(stdout, *asJSON, a, kvf, mem, *streams, *longPrompt, *gen, *maxBatched, *noPrefixCache)
	}

	// The requests: deterministic pseudo-text token ids (speed does not
	// depend on them), every prompt distinct except for a shared prefix.
	tok := func(i int) int32 { return int32((i*7919 + 13) % c.Vocab) }
	var prompts [][]int32
	if *workload == "prefix" {
		for r := range *requests {
			p := make([]int32, 0, *prefixLen+*suffixLen)
			for i := range *prefixLen {
				p = append(p, tok(i))
			}
			for i := range *suffixLen {
				p = append(p, tok(*prefixLen+(r+1)**suffixLen+i))
			}
			prompts = append(prompts, p)
		}
	} else {
		span := (*prompt + *repeat - 1) / *repeat
		for s := range *parallel {
			p := make([]int32, *prompt)
			for i := range p {
				p[i] = tok(s**prompt + i%span)
			}
			prompts = append(prompts, p)
		}
	}
	perSeq := len(prompts[0]) + *gen
	if perSeq > c.Context {
		return fmt.Errorf("a prompt of %d tokens + --gen %d exceeds the model's context of %d", len(prompts[0]), *gen, c.Context)
	}
	e, err := startEngine(a, kvf.kv(perSeq, len(prompts)), engine.Config{MaxSeqs: len(prompts), KVType: kvType,
		MaxBatchedTokens: cmp.Or(*maxBatched, max(512, *prompt)), NoPrefixCache: *noPrefixCache, Spec: sf.resolved})
	if err != nil {
		return err
	}

	if *workload == "throughput" && !*noWarmup {
		// llama-bench's warm-up: a prompt of min(32, n_prompt) tokens and
		// one token generated, untimed. Its tokens are none of the timed
		// prompts', so the prefix cache serves them nothing.
		w := make([]int32, min(32, *prompt))
		for i := range w {
			w[i] = tok(1_000_003 + i)
		}
		if _, err := submitAll(e, [][]int32{w}, 1); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	runs, err := submitAll(e, prompts, *gen)
	if err != nil {
		return err
	}
	mem.afterRun(c, a.NumBlocks, a.BlockSize)

	if *workload == "prefix" {
		return reportPrefix(stdout, *asJSON, prefixResult{
			Engine: "kiln", Workload: "prefix", Threads: m.Threads(), Requests: *requests, PrefixLen: *prefixLen,
			SuffixLen: *suffixLen, GenTokens: *gen, PrefixCache: !*noPrefixCache, Kernels: simd.Impl(), memReport: mem,
		}, runs)
	}

	// Prefill ends when every request has its first token (that sample
	// closes its prompt's forward); decode is every token after that.
	start, prefillEnd, end := runs[0].start, runs[0].start, runs[0].start
	for _, r := range runs {
		prefillEnd = later(prefillEnd, r.times[0])
		end = later(end, r.times[len(r.times)-1])
	}
	decoded := 0
	for _, r := range runs {
		for _, t := range r.times {
			if t.After(prefillEnd) {
				decoded++
			}
		}
	}
	prefill, decode := prefillEnd.Sub(start), end.Sub(prefillEnd)
	r := benchResult{
		Engine: "kiln", Threads: m.Threads(), Parallel: *parallel, PromptTokens: *prompt, GenTokens: *gen,
		PrefillTokS: round2(float64(*prompt**parallel) / prefill.Seconds()),
		ModelBytes:  bytes,
		StepBytes:   m.StepBytes(bytes, *parallel),
		Kernels:     simd.Impl(),
		memReport:   mem,
	}
	r.specReport = sf.report(e.Stats().Counters)
	st := e.Stats()
	r.PeakRunning, r.Preemptions = st.PeakRunning, st.Preemptions
	if st.StepTime > 0 {
		r.EngineOverhead = float64(int64(10000*float64(st.StepTime-st.ForwardTime)/float64(st.StepTime)+0.5)) / 10000
	}
	if decoded > 0 {
		r.DecodeTokS = round2(float64(decoded) / decode.Seconds())
		// One pass over the step's weights per step: each step decodes one
		// token of every sequence.
		r.DecodeGBs = round2(float64(r.StepBytes) * float64(decoded) / float64(*parallel) / decode.Seconds() / 1e9)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	fmt.Fprintf(stdout, "model     %s (%.1f MiB, %d threads)\n", pos[0], float64(bytes)/(1<<20), r.Threads)
	fmt.Fprintf(stdout, "kernels   %s\n", simd.ImplReason())
	fmt.Fprintf(stdout, "prefill   %8.2f tok/s  (%d tokens x %d sequences)\n", r.PrefillTokS, *prompt, *parallel)
	active := ""
	if c.MoE() {
		active = fmt.Sprintf(" active, %.1f MiB per step: %d of %d experts per token", float64(r.StepBytes)/(1<<20), c.ExpertsUsed, c.Experts)
	}
	fmt.Fprintf(stdout, "decode    %8.2f tok/s  (%d tokens x %d sequences; %.1f GB/s of weights%s)\n", r.DecodeTokS, *gen, *parallel, r.DecodeGBs, active)
	fmt.Fprintf(stdout, "engine    %8.2f%% of step time outside the forward; at most %d requests at once, %d preemptions\n",
		100*r.EngineOverhead, r.PeakRunning, r.Preemptions)
	r.specReport.print(stdout)
	r.memReport.print(stdout)
	return nil
}

// benchRun is one request's timeline as its reader saw it.
type benchRun struct {
	start time.Time   // Submit
	times []time.Time // one per token event
	final engine.Event
}

// submitAll submits one greedy request of gen tokens per prompt, all at
// once, and reads every stream to its end. The engine has no tokenizer, so
// no end-of-generation token cuts a request short.
func submitAll(e *engine.Engine, prompts [][]int32, gen int) ([]*benchRun, error) {
	runs := make([]*benchRun, len(prompts))
	chans := make([]<-chan engine.Event, len(prompts))
	for i, p := range prompts {
		runs[i] = &benchRun{start: time.Now(), times: make([]time.Time, 0, gen)}
		ch, err := e.Submit(context.Background(), engine.Request{Prompt: p, Params: greedyParams(gen)})
		if err != nil {
			return nil, err
		}
		chans[i] = ch
	}
	var wg sync.WaitGroup
	for i, ch := range chans {
		wg.Add(1)
		go func(r *benchRun) {
			defer wg.Done()
			for ev := range ch {
				if ev.Token >= 0 {
					r.times = append(r.times, time.Now())
				}
				if ev.Done {
					r.final = ev
				}
			}
		}(runs[i])
	}
	wg.Wait()
	for _, r := range runs {
		if r.final.Reason == engine.Abort {
			return nil, fmt.Errorf("bench request aborted: %v", r.final.Err)
		}
		if len(r.times) != gen {
			return nil, fmt.Errorf("bench request ended (%s) after %d of %d tokens", r.final.Reason, len(r.times), gen)
		}
	}
	return runs, nil
}

func reportPrefix(stdout io.Writer, asJSON bool, r prefixResult, runs []*benchRun) error {
	var ttft []float64
	start, end := runs[0].start, runs[0].start
	for _, run := range runs {
		ttft = append(ttft, float64(run.final.Timings.FirstToken.Microseconds())/1000)
		r.CachedTok += run.final.Usage.CachedPromptTokens
		end = later(end, run.times[len(run.times)-1])
	}
	slices.Sort(ttft)
	r.TTFTMedian = round2(median(ttft))
	r.TTFTMax = round2(ttft[len(ttft)-1])
	r.TotalS = round2(end.Sub(start).Seconds())
	if asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	cache := "on"
	if !r.PrefixCache {
		cache = "off"
	}
	fmt.Fprintf(stdout, "workload  prefix: %d requests, %d shared + %d own prompt tokens, %d generated (%d threads, %s)\n",
		r.Requests, r.PrefixLen, r.SuffixLen, r.GenTokens, r.Threads, r.Kernels)
	fmt.Fprintf(stdout, "cache     %s: %d prompt tokens served from it\n", cache, r.CachedTok)
	fmt.Fprintf(stdout, "ttft      median %.2f ms, max %.2f ms\n", r.TTFTMedian, r.TTFTMax)
	fmt.Fprintf(stdout, "total     %.2f s\n", r.TotalS)
	r.memReport.print(stdout)
	return nil
}

// median of sorted xs (not empty).
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
