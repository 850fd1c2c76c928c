package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"kiln/kernels/simd"
	"kiln/model"
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
	// DecodeGBs is weight bytes streamed per second during decode: one full
	// pass over the weights per step, shared by all parallel sequences.
	DecodeGBs float64 `json:"decode_weight_gb_s"`
	// Kernels is the kernel set that ran (simd.Impl: avx512vnni, avx2,
	// generic; KILN_KERNELS caps it).
	Kernels string `json:"kernels"`
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	threads := fs.Int("threads", 0, "worker threads (0: one per core)")
	prompt := fs.Int("prompt", 128, "prompt tokens to prefill (per sequence)")
	gen := fs.Int("gen", 64, "tokens to decode (per sequence)")
	parallel := fs.Int("parallel", 1, "sequences decoded together in one batch")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	noRepack := fs.Bool("no-repack", false, "keep weights in the file's layout (no load-time repacking)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the timed part to this file (go tool pprof)")
	fs.Usage = func() {
		io.WriteString(stderr, "usage: kiln bench MODEL [--threads N] [--prompt 128] [--gen 64] [--parallel N] [--json] [--no-repack]\n")
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
	f, err := openGGUF(pos[0], stderr)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := model.Load(f, model.Options{Threads: *threads, NoRepack: *noRepack})
	if err != nil {
		return err
	}
	defer m.Close()
	c := &m.Config
	total := *prompt + *gen
	if total > c.Context {
		return fmt.Errorf("--prompt %d + --gen %d exceeds the model's context of %d", *prompt, *gen, c.Context)
	}
	const bs = 16
	per := (total + bs - 1) / bs
	kv, err := m.NewKVCache(model.KVCacheOptions{NumBlocks: per * *parallel, BlockSize: bs})
	if err != nil {
		return err
	}
	tables := make([][]int32, *parallel)
	for s := range tables {
		for i := 0; i < per; i++ {
			tables[s] = append(tables[s], int32(s*per+i))
		}
	}
	// Deterministic pseudo-text token ids (speed does not depend on them).
	tok := func(i int) int32 { return int32((i*7919 + 13) % c.Vocab) }

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

	// Prefill: each sequence's prompt in one batch, as llama.cpp's bench does
	// with a 512-token ubatch.
	start := time.Now()
	for s := 0; s < *parallel; s++ {
		b := &model.Batch{SeqStarts: []int32{0, int32(*prompt)}, BlockTables: [][]int32{tables[s]},
			ContextLens: []int32{int32(*prompt)}, LogitRows: []int32{int32(*prompt - 1)}}
		for i := 0; i < *prompt; i++ {
			b.Tokens = append(b.Tokens, tok(i))
			b.Positions = append(b.Positions, int32(i))
		}
		if _, err := m.Forward(b, kv); err != nil {
			return err
		}
	}
	prefill := time.Since(start)

	// Decode: all sequences advance one token per step in one batch.
	b := &model.Batch{BlockTables: tables}
	start = time.Now()
	for step := 0; step < *gen; step++ {
		b.Tokens, b.Positions, b.SeqStarts, b.ContextLens, b.LogitRows = b.Tokens[:0], b.Positions[:0], b.SeqStarts[:0], b.ContextLens[:0], b.LogitRows[:0]
		b.SeqStarts = append(b.SeqStarts, 0)
		for s := 0; s < *parallel; s++ {
			p := *prompt + step
			b.Tokens = append(b.Tokens, tok(p+s))
			b.Positions = append(b.Positions, int32(p))
			b.SeqStarts = append(b.SeqStarts, int32(s+1))
			b.ContextLens = append(b.ContextLens, int32(p+1))
			b.LogitRows = append(b.LogitRows, int32(s))
		}
		if _, err := m.Forward(b, kv); err != nil {
			return err
		}
	}
	decode := time.Since(start)

	var bytes uint64
	for i := range f.Tensors {
		bytes += f.Tensors[i].Size
	}
	r := benchResult{
		Engine: "kiln", Threads: m.Threads(), Parallel: *parallel, PromptTokens: *prompt, GenTokens: *gen,
		PrefillTokS: round2(float64(*prompt**parallel) / prefill.Seconds()),
		DecodeTokS:  round2(float64(*gen**parallel) / decode.Seconds()),
		ModelBytes:  bytes,
		Kernels:     simd.Impl(),
	}
	r.DecodeGBs = round2(float64(bytes) * float64(*gen) / decode.Seconds() / 1e9)
	if *asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	fmt.Fprintf(stdout, "model     %s (%.1f MiB, %d threads)\n", pos[0], float64(bytes)/(1<<20), r.Threads)
	fmt.Fprintf(stdout, "kernels   %s\n", simd.ImplReason())
	fmt.Fprintf(stdout, "prefill   %8.2f tok/s  (%d tokens x %d sequences)\n", r.PrefillTokS, *prompt, *parallel)
	fmt.Fprintf(stdout, "decode    %8.2f tok/s  (%d tokens x %d sequences; %.1f GB/s of weights)\n", r.DecodeTokS, *gen, *parallel, r.DecodeGBs)
	return nil
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
