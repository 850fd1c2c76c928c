package synth

import (
	"bytes"
	"strings"
	"testing"

	"kiln/convert"
	"kiln/gguf"
)

// FuzzPlan feeds arbitrary specs and types to Plan: it must return a
// synth: error or a model whose directory is consistent, never panic; small
// models are written and parsed back.
func FuzzPlan(f *testing.F) {
	f.Add("llama", 64, 2, 4, 2, 0, 128, 300, 0, 10000.0, 1e-5, false, "F32", uint64(1))
	f.Add("qwen2", 256, 1, 4, 1, 64, 256, 259, 16, 1e6, 1e-6, true, "Q4_K_M", uint64(2))
	f.Add("qwen3", 96, 1, 3, 3, 32, 96, 400, 0, 0.0, 0.0, true, "Q6_K", uint64(3))
	f.Add("llama", 0, -1, 0, 7, 3, 5, -1, -5, -1.0, 2.0, false, "Q9", uint64(4))
	f.Fuzz(func(t *testing.T, arch string, dim, layers, heads, kv, hd, ffn, vocab, ctx int, theta, eps float64, tied bool, typ string, seed uint64) {
		s := Spec{Arch: arch, Dim: dim, Layers: layers, Heads: heads, KVHeads: kv, HeadDim: hd, FFN: ffn,
			VocabSize: vocab, Ctx: ctx, RopeTheta: theta, NormEps: eps, Tied: tied}
		sc, err := convert.ParseScheme(typ)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			if !strings.HasPrefix(err.Error(), "synth: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		if s.VocabSize > 4096 || s.Dim > 4096 || s.FFN > 4096 || s.Layers > 8 || s.Heads > 64 || s.HeadDim > 512 {
			return // valid but slow to plan here
		}
		m, err := Plan(s, nil, sc, seed)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "synth: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		var elems uint64
		for i, ts := range m.Tensors {
			n := uint64(1)
			for _, d := range ts.Shape {
				if d == 0 {
					t.Fatalf("%s has a zero dimension: %v", ts.Name, ts.Shape)
				}
				n *= d
			}
			elems += n
			if ts.Shape[0]%uint64(m.Types[i].BlockSize()) != 0 {
				t.Fatalf("%s: row %d does not fit %s", ts.Name, ts.Shape[0], m.Types[i])
			}
		}
		if elems > 1<<18 {
			return
		}
		var buf bytes.Buffer
		if _, err := m.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		g, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Tensors) != len(m.Tensors) {
			t.Fatalf("%d tensors written, %d planned", len(g.Tensors), len(m.Tensors))
		}
	})
}
