package model_test

import (
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/synth"
)

// TestOLMoELoad: olmoe's experts are feed_forward_length wide and not
// renormalised, its q/k norms span the whole projection, and a per-head
// sized norm (a qwen3-style file mislabelled) is refused naming the tensor.
func TestOLMoELoad(t *testing.T) {
	spec := synth.Spec{Arch: "olmoe", Dim: 64, Layers: 2, Heads: 4, KVHeads: 4, FFN: 32, VocabSize: 320,
		Experts: 4, ExpertsUsed: 2}
	src := tinymodel.File(t, spec, "F32", 7)
	m, err := model.Load(src, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if c := m.Config; c.ExpertFFN != 32 || c.ExpertNorm || !c.QKNormWhole || !c.RopeNeox || len(m.Weights.Layers[0].KNorm) != 64 {
		t.Fatalf("ExpertFFN %d, ExpertNorm %v, QKNormWhole %v, RopeNeox %v, k norm %d; want 32, false, true, true, 64",
			c.ExpertFFN, c.ExpertNorm, c.QKNormWhole, c.RopeNeox, len(m.Weights.Layers[0].KNorm))
	}
	f := edited(t, src, nil, func(ti *gguf.TensorInfo, data *[]byte) bool {
		if ti.Name == "blk.1.attn_q_norm.weight" {
			ti.Shape = []uint64{16}
			*data = (*data)[:16*4]
		}
		return true
	})
	m, err = model.Load(f, model.Options{Threads: 1})
	if err == nil {
		m.Close()
		t.Fatal("loaded a head-sized q norm")
	}
	if want := "tensor blk.1.attn_q_norm.weight has shape [16], want [64]"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
}
