package engine_test

import (
	"context"
	"testing"

	"kiln/engine"
	"kiln/gguf"
	"kiln/internal/testutil"
	"kiln/model"
	"kiln/sample"
)

// BenchmarkSearch times one beam search of width 4 and one n = 4 request
// (greedy, 32 tokens each, a 101-token prompt the prefix cache has not
// seen) on stories260K, one at a time on an engine of their own: the cost
// of the layer that turns a request into many sequences.
//
//	go test ./engine/ -run '^$' -bench Search -benchtime 20x
//
// Measured when beam search and n > 1 moved above the loop (Xeon, avx2
// fma f16c avx512f/bw/vl avx512_vnni avx_vnni, 2 shared cores, load ~18;
// process CPU time of 20 ops, median of 4 alternated runs): beam4 0.61 s
// before, 2.46 s after (225 -> 1169 tokens computed per search: each
// round recomputes every beam's partial last block, which the prefix
// cache does not hold); n4 0.51 s before, 0.55 s after (225 -> 240
// tokens: the 3 further completions compute the prompt's partial block).
//
// With partial blocks in the prefix cache (kvcache/partial.go), same
// machine, load ~15, user+sys CPU of the whole test process (model load
// and 20 ops), median of 4 runs alternated with the commit before:
// beam4 2.65 s -> 0.63 s (1169 -> 225 tokens computed per search: each
// round copies its beams' partial blocks and computes their newest
// tokens, as the search did before it moved above the loop); n4 0.54 s
// -> 0.61 s, within the noise (240 -> 228 tokens: each further
// completion computes the prompt's last token only, for its logits).
func BenchmarkSearch(b *testing.B) {
	f, err := gguf.Open(testutil.SharedModel(b, "stories260K.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.Load(f, model.Options{Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	prompt := make([]int32, 100)
	for i := range prompt {
		prompt[i] = int32(i*37%500 + 3)
	}
	greedy := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 32}
	for _, tc := range []struct {
		name string
		req  engine.Request
	}{
		{"beam4", engine.Request{Prompt: prompt, Params: greedy, BeamWidth: 4, N: 4, IgnoreEOS: true}},
		{"n4", engine.Request{Prompt: prompt, Params: greedy, N: 4, IgnoreEOS: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, err := engine.New(m, engine.Config{NumBlocks: 256})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			i := 0
			for b.Loop() {
				i++
				req := tc.req
				req.Prompt = append([]int32{int32(i%400 + 3)}, prompt...) // no prefix shared between runs
				ch, err := e.Submit(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				for ev := range ch {
					if ev.Done && ev.Reason == engine.Abort {
						b.Fatal(ev.Err)
					}
				}
			}
			st := e.Stats()
			b.ReportMetric(float64(st.Steps)/float64(b.N), "steps/op")
			b.ReportMetric(float64(st.ComputedTokens)/float64(b.N), "computed/op")
		})
	}
}
