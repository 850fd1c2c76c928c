package model_test

import (
	"math"
	"testing"

	"kiln/gguf"
	"kiln/internal/reference"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/synth"
)

// synthModel writes a small random-weight model of arch in type typ with a
// synthetic vocabulary (no shared files needed) and loads it.
func synthModel(t testing.TB, spec synth.Spec, typ string) (*gguf.File, *model.Model) {
	t.Helper()
	return tinymodel.Model(t, spec, typ, 7, model.Options{})
}

// smallSpecs are one small model per architecture: GQA, and for qwen3 a
// head width that makes Heads*HeadDim differ from Dim.
var smallSpecs = []synth.Spec{
	{Arch: "llama", Dim: 128, Layers: 2, Heads: 4, KVHeads: 2, FFN: 256, VocabSize: 400},
	{Arch: "llama", Dim: 128, Layers: 2, Heads: 4, KVHeads: 1, FFN: 256, VocabSize: 400, Tied: true,
		RopeScaling: &synth.Llama3Rope{Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 64}},
	{Arch: "qwen2", Dim: 128, Layers: 2, Heads: 4, KVHeads: 2, FFN: 256, VocabSize: 400, Tied: true, RopeTheta: 1e6, NormEps: 1e-6},
	{Arch: "qwen3", Dim: 128, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, FFN: 256, VocabSize: 400, Tied: true, RopeTheta: 1e6, NormEps: 1e-6},
	{Arch: "qwen3moe", Dim: 128, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, FFN: 256, VocabSize: 400, Tied: true, RopeTheta: 1e6, NormEps: 1e-6,
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 64},
	{Arch: "llama", Dim: 128, Layers: 2, Heads: 4, KVHeads: 2, FFN: 64, VocabSize: 400, Experts: 4, ExpertsUsed: 2},
	{Arch: "qwen2moe", Dim: 128, Layers: 2, Heads: 4, KVHeads: 2, FFN: 256, VocabSize: 400, RopeTheta: 1e6, NormEps: 1e-6,
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 64, SharedFFN: 96},
	{Arch: "olmoe", Dim: 128, Layers: 2, Heads: 4, KVHeads: 4, FFN: 64, VocabSize: 400, RopeTheta: 1e4, NormEps: 1e-5,
		Experts: 8, ExpertsUsed: 4},
}

// TestArchitecturesMatchReference runs each architecture's fast path
// (F32 weights, F32 KV) against the float64 reference over a prompt fed as
// one chunk and then token by token.
func TestArchitecturesMatchReference(t *testing.T) {
	for _, spec := range smallSpecs {
		name := spec.Arch
		if spec.RopeScaling != nil {
			name += "-llama3rope"
		}
		if spec.Arch == "llama" && spec.Experts > 0 {
			name = "mixtral"
		}
		for _, typ := range []string{"F32", "F16"} {
			t.Run(name+"-"+typ, func(t *testing.T) {
				f, m := synthModel(t, spec, typ)
				ref, err := reference.Load(f)
				if err != nil {
					t.Fatal(err)
				}
				prompt := []int32{1, 17, 250, 3, 99, 399, 42, 42, 42, 7, 300, 12, 5, 260, 280, 111, 222, 333, 44, 55}
				want := ref.Logits(prompt)
				r := newRunner(t, m, len(prompt), true)
				got := r.feed(prompt[:13]...)
				for _, tok := range prompt[13:] {
					got = append(got, r.feed(tok)...)
				}
				// F16 weights: kiln (as llama.cpp) rounds activations to F16
				// before the dot; the reference does not. Measured worst over
				// the specs (Intel Xeon family 6 model 207; identical under avx512vnni, avx2
				// and generic kernels): F32 3.2e-6 (qwen2), so 2e-5; F16
				// 6.39e-3 (qwen2), whose bound 1e-2 is already under 2x.
				tol := 2e-5
				if typ == "F16" {
					tol = 1e-2
				}
				worst := 0.0
				for p := range prompt {
					d := maxLogProbDiff(got[p], want[p])
					worst = math.Max(worst, d)
					if d > tol {
						t.Errorf("position %d: max |log p - log p_ref| = %.3g > %.g", p, d, tol)
					}
				}
				t.Logf("max |log p - log p_ref| = %.3g", worst)
			})
		}
	}
}

// TestForwardDecodeAllocs: a decode step allocates nothing once scratch
// has grown (BLUEPRINT habit 5), dense (qwen3) or mixture of experts
// (qwen3moe: routing, grouping and the per-expert products reuse scratch;
// qwen2moe: and its shared expert).
func TestForwardDecodeAllocs(t *testing.T) {
	for _, c := range []struct {
		spec int
		typ  string
	}{{3, "Q8_0"}, {4, "Q8_0"}, {6, "Q8_0"}, {7, "Q8_0"}} {
		t.Run(smallSpecs[c.spec].Arch+"-"+c.typ, func(t *testing.T) { decodeAllocs(t, smallSpecs[c.spec], c.typ) })
	}
}

func decodeAllocs(t *testing.T, spec synth.Spec, typ string) {
	_, m := synthModel(t, spec, typ)
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: 8, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	b := &model.Batch{Tokens: []int32{5, 6}, Positions: []int32{0, 0}, SeqStarts: []int32{0, 1, 2},
		BlockTables: [][]int32{{0, 1, 2}, {3, 4, 5}}, ContextLens: []int32{1, 1}, LogitRows: []int32{0, 1}}
	step := func() {
		if _, err := m.Forward(b, kv); err != nil {
			t.Fatal(err)
		}
		for i := range b.Positions {
			b.Positions[i]++
			b.ContextLens[i]++
		}
	}
	step()
	if n := testing.AllocsPerRun(20, step); n != 0 {
		t.Fatalf("decode step allocates %.1f times per call, want 0", n)
	}
}
