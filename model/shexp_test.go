package model_test

import (
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/synth"
)

// qwen2moeSpec is a tiny qwen2moe: 4 experts of width 64, 2 per token, and
// a shared expert of width 96.
var qwen2moeSpec = synth.Spec{Arch: "qwen2moe", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16, FFN: 128,
	Experts: 4, ExpertsUsed: 2, ExpertFFN: 64, SharedFFN: 96, VocabSize: 320, RopeTheta: 1e6, NormEps: 1e-6}

// TestSharedExpertLoad: qwen2moe's shared expert loads with its width from
// expert_shared_feed_forward_length (else feed_forward_length, as
// llama.cpp), its experts are not renormalised, and a missing shared-expert
// tensor is an error naming it.
func TestSharedExpertLoad(t *testing.T) {
	src := tinymodel.File(t, qwen2moeSpec, "F32", 7)
	m, err := model.Load(src, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if c := m.Config; c.SharedFFN != 96 || c.ExpertNorm || !c.QKVBias {
		t.Fatalf("SharedFFN %d, ExpertNorm %v, QKVBias %v; want 96, false, true", c.SharedFFN, c.ExpertNorm, c.QKVBias)
	}
	if g := m.Weights.Layers[1].SharedGate; g.Rows != 1 || g.Cols != 64 {
		t.Fatalf("shared gate %dx%d, want 1x64", g.Rows, g.Cols)
	}
	for _, c := range []struct {
		name   string
		kv     func(*gguf.KV) bool
		tensor func(*gguf.TensorInfo, *[]byte) bool
		want   string
	}{
		{"shared gate missing", nil, func(ti *gguf.TensorInfo, _ *[]byte) bool {
			return ti.Name != "blk.1.ffn_gate_inp_shexp.weight"
		}, "tensor blk.1.ffn_gate_inp_shexp.weight is missing"},
		{"shared down missing", nil, func(ti *gguf.TensorInfo, _ *[]byte) bool {
			return ti.Name != "blk.0.ffn_down_shexp.weight"
		}, "tensor blk.0.ffn_down_shexp.weight is missing"},
		{"shared width 0", func(e *gguf.KV) bool {
			if e.Key == "qwen2moe.expert_shared_feed_forward_length" {
				e.Value = gguf.Uint32Value(0)
			}
			return true
		}, nil, "qwen2moe.expert_shared_feed_forward_length is not an integer in 1.."},
		{"shared width from feed_forward_length", func(e *gguf.KV) bool {
			return e.Key != "qwen2moe.expert_shared_feed_forward_length"
		}, nil, "tensor blk.0.ffn_gate_shexp.weight has shape [64 96], want [64 128]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := model.Load(edited(t, src, c.kv, c.tensor), model.Options{Threads: 1})
			if err == nil {
				m.Close()
				t.Fatalf("loaded; want an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}
