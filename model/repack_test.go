package model_test

import (
	"math"
	"testing"

	"kiln/model"
)

// TestRepackMatchesNoRepack: a Q8_0 or Q4_0 model loaded with its weights repacked
// (the default) gives bit for bit the logits of the same file loaded with
// NoRepack, for a prompt chunk and for decode steps; tied and untied
// outputs (the tied one shares the embedding table, which keeps its
// pages), and the embedding rows stay readable after the load evicted the
// repacked tensors' pages.
func TestRepackMatchesNoRepack(t *testing.T) {
	for _, c := range []struct {
		typ  string
		spec int
	}{{"Q8_0", 0}, {"Q8_0", 1}, {"Q4_0", 0}, {"Q4_0", 1}, {"Q8_0", 4}, {"Q4_0", 4}} { // untied, tied, qwen3moe
		spec := smallSpecs[c.spec]
		f, packed := synthModel(t, spec, c.typ)
		plain, err := model.Load(f, model.Options{Threads: 2, NoRepack: true})
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		if !packed.Weights.Layers[0].Q.Repacked() || plain.Weights.Layers[0].Q.Repacked() {
			t.Fatalf("Repacked: default %v, NoRepack %v", packed.Weights.Layers[0].Q.Repacked(), plain.Weights.Layers[0].Q.Repacked())
		}
		if packed.Weights.Embed.Repacked() {
			t.Fatal("the embedding table was repacked")
		}
		rp, rn := newRunner(t, packed, 32, false), newRunner(t, plain, 32, false)
		prompt := []int32{1, 17, 42, 99, 3, 250, 7, 8, 9, 10, 11}
		steps := [][]int32{prompt, {5}, {300}, {2}}
		for s, toks := range steps {
			a, b := rp.feed(toks...), rn.feed(toks...)
			for i := range a {
				for v := range a[i] {
					if math.Float32bits(a[i][v]) != math.Float32bits(b[i][v]) {
						t.Fatalf("%s %s tied=%v step %d row %d logit %d: repacked %g, file layout %g", c.typ, spec.Arch, spec.Tied, s, i, v, a[i][v], b[i][v])
					}
				}
			}
		}
		row := make([]float32, packed.Config.Dim)
		packed.Weights.Embed.Row(3, row) // pages of a non-repacked tensor stay valid
		if ti, ok := f.Tensor("blk.0.attn_q.weight"); !ok || ti.Type.String() != c.typ {
			t.Fatalf("synth model has no %s attn_q", c.typ)
		}
	}
}
