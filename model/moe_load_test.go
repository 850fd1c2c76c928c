package model_test

import (
	"path/filepath"
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/synth"
)

// moeSpec is a tiny qwen3moe: 4 experts of width 64, 2 per token.
var moeSpec = synth.Spec{Arch: "qwen3moe", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 32, FFN: 128,
	Experts: 4, ExpertsUsed: 2, ExpertFFN: 64, VocabSize: 320, RopeTheta: 1e6, NormEps: 1e-6}

// TestMoEBatchInvariance: a prompt's logits are bit-identical fed as one
// chunk, in two, or token by token, though each grouping puts different
// rows together in each expert's product (qwen3moe, and llama with experts
// as Mixtral; F32 weights take mul_mat_id's vec_dot order, Q8_0 the GEMMs,
// Q4_K the gemv's order; qwen2moe adds its gated shared expert).
func TestMoEBatchInvariance(t *testing.T) {
	mixtral := synth.Spec{Arch: "llama", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 64,
		Experts: 4, ExpertsUsed: 2, VocabSize: 320}
	// Rows of 256 so that Q4_K applies: its experts take the gemv's order.
	wide := synth.Spec{Arch: "qwen3moe", Dim: 256, Layers: 1, Heads: 4, KVHeads: 2, HeadDim: 64, FFN: 256,
		Experts: 4, ExpertsUsed: 2, ExpertFFN: 256, VocabSize: 320, RopeTheta: 1e6, NormEps: 1e-6}
	prompt := []int32{1, 17, 250, 3, 99, 300, 42, 42, 42, 7, 300, 12, 5, 260, 280, 111, 222, 33, 44, 55}
	for _, c := range []struct {
		name  string
		spec  synth.Spec
		types []string
	}{{"qwen3moe", moeSpec, []string{"F32", "Q8_0"}}, {"mixtral", mixtral, []string{"F32", "Q8_0"}}, {"qwen3moe-256", wide, []string{"Q4_K"}},
		{"qwen2moe", qwen2moeSpec, []string{"F32", "Q8_0"}}} {
		spec := c.spec
		for _, typ := range c.types {
			t.Run(c.name+"-"+typ, func(t *testing.T) {
				_, m := tinymodel.Model(t, spec, typ, 7, model.Options{Threads: 2})
				if !m.Config.MoE() || m.Config.ExpertsUsed != 2 {
					t.Fatalf("config %+v: not the 4-expert, 2-used model written", m.Config)
				}
				if got := m.Weights.Layers[0].Experts[3].Down.Type; got.String() != typ {
					t.Fatalf("experts stored as %s, want %s", got, typ)
				}
				whole := newRunner(t, m, len(prompt), false).feed(prompt...)
				r := newRunner(t, m, len(prompt), false)
				halves := append(r.feed(prompt[:7]...), r.feed(prompt[7:]...)...)
				r = newRunner(t, m, len(prompt), false)
				var single [][]float32
				for _, tok := range prompt {
					single = append(single, r.feed(tok)...)
				}
				for p := range prompt {
					for v := range whole[p] {
						if whole[p][v] != halves[p][v] || whole[p][v] != single[p][v] {
							t.Fatalf("position %d token %d: whole %v, halves %v, one by one %v", p, v, whole[p][v], halves[p][v], single[p][v])
						}
					}
				}
			})
		}
	}
}

// edited writes src's metadata and tensors through edit functions (false
// drops the entry; tensor may change its shape and data) and opens it.
func edited(t *testing.T, src *gguf.File, kv func(*gguf.KV) bool, tensor func(ti *gguf.TensorInfo, data *[]byte) bool) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	for _, e := range src.KV {
		if kv == nil || kv(&e) {
			w.Add(e.Key, e.Value)
		}
	}
	for i := range src.Tensors {
		ti, data := src.Tensors[i], src.Data(&src.Tensors[i])
		ti.Shape = append([]uint64(nil), ti.Shape...)
		if tensor == nil || tensor(&ti, &data) {
			if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, data); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "edited.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestMoEBadFiles: each malformed mixture-of-experts file is refused with
// an error naming the key or tensor at fault.
func TestMoEBadFiles(t *testing.T) {
	src := tinymodel.File(t, moeSpec, "F32", 7)
	setUint := func(key string, v uint32) func(*gguf.KV) bool {
		return func(e *gguf.KV) bool {
			if e.Key == key {
				e.Value = gguf.Uint32Value(v)
			}
			return true
		}
	}
	drop := func(key string) func(*gguf.KV) bool { return func(e *gguf.KV) bool { return e.Key != key } }
	cases := []struct {
		name   string
		kv     func(*gguf.KV) bool
		tensor func(*gguf.TensorInfo, *[]byte) bool
		want   string
	}{
		{"no experts used", setUint("qwen3moe.expert_used_count", 0), nil, "qwen3moe.expert_used_count = 0 is out of range"},
		{"more used than experts", setUint("qwen3moe.expert_used_count", 5), nil, "qwen3moe.expert_used_count = 5 is out of range 1..qwen3moe.expert_count (4)"},
		{"expert_used_count missing", drop("qwen3moe.expert_used_count"), nil, "qwen3moe.expert_used_count is missing"},
		{"expert_count missing", drop("qwen3moe.expert_count"), nil, "qwen3moe.expert_count is missing or 0"},
		{"expert_count 0", setUint("qwen3moe.expert_count", 0), nil, "qwen3moe.expert_count is missing or 0"},
		{"no expert width at all", func(e *gguf.KV) bool {
			return e.Key != "qwen3moe.expert_feed_forward_length" && e.Key != "qwen3moe.feed_forward_length"
		}, nil, "qwen3moe.expert_feed_forward_length is missing and feed_forward_length/expert_used_count is 0"},
		{"expert width 0", setUint("qwen3moe.expert_feed_forward_length", 0), nil, "qwen3moe.expert_feed_forward_length is not an integer in 1.."},
		{"experts tensor of rank 2", nil, func(ti *gguf.TensorInfo, _ *[]byte) bool {
			if ti.Name == "blk.1.ffn_up_exps.weight" {
				ti.Shape = []uint64{ti.Shape[0], ti.Shape[1] * ti.Shape[2]}
			}
			return true
		}, "tensor blk.1.ffn_up_exps.weight has shape [64 256], want [64 64 4]"},
		{"experts tensor of the wrong shape", nil, func(ti *gguf.TensorInfo, _ *[]byte) bool {
			if ti.Name == "blk.0.ffn_down_exps.weight" {
				ti.Shape = []uint64{ti.Shape[1], ti.Shape[0], ti.Shape[2]}
				ti.Shape[0], ti.Shape[1] = 32, 128 // same bytes, other split
			}
			return true
		}, "tensor blk.0.ffn_down_exps.weight has shape [32 128 4], want [64 64 4]"},
		{"experts tensor missing", nil, func(ti *gguf.TensorInfo, _ *[]byte) bool {
			return ti.Name != "blk.1.ffn_gate_exps.weight"
		}, "tensor blk.1.ffn_gate_exps.weight is missing"},
		{"router missing", nil, func(ti *gguf.TensorInfo, _ *[]byte) bool {
			return ti.Name != "blk.0.ffn_gate_inp.weight"
		}, "tensor blk.0.ffn_gate_inp.weight is missing"},
		{"router without experts", func(e *gguf.KV) bool {
			// The same tensors declared as a dense llama: no expert keys.
			if e.Key == "general.architecture" {
				e.Value = gguf.StringValue("llama")
			}
			if strings.HasPrefix(e.Key, "qwen3moe.") {
				e.Key = "llama." + strings.TrimPrefix(e.Key, "qwen3moe.")
			}
			return !strings.Contains(e.Key, "expert")
		}, nil, "tensor blk.0.ffn_gate_inp.weight is a mixture-of-experts router, but metadata llama.expert_count is not set"},
		{"experts on a dense architecture", func(e *gguf.KV) bool {
			if e.Key == "general.architecture" {
				e.Value = gguf.StringValue("qwen3")
			}
			if strings.HasPrefix(e.Key, "qwen3moe.") {
				e.Key = "qwen3." + strings.TrimPrefix(e.Key, "qwen3moe.")
			}
			return true
		}, nil, "metadata qwen3.expert_count = 4: kiln runs qwen3 only as a dense model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := edited(t, src, c.kv, c.tensor)
			m, err := model.Load(f, model.Options{Threads: 1})
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

// TestMoEWithoutDenseWidth: qwen3moe.feed_forward_length may be absent
// (llama.cpp does not need it), and without expert_feed_forward_length the
// experts are feed_forward_length/expert_used_count wide, as llama.cpp
// falls back.
func TestMoEWithoutDenseWidth(t *testing.T) {
	src := tinymodel.File(t, moeSpec, "F32", 7)
	f := edited(t, src, func(e *gguf.KV) bool { return e.Key != "qwen3moe.feed_forward_length" }, nil)
	m, err := model.Load(f, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if m.Config.FFN != 0 || m.Config.ExpertFFN != 64 {
		t.Fatalf("FFN %d, ExpertFFN %d; want 0 and 64", m.Config.FFN, m.Config.ExpertFFN)
	}
	// 128 / 2 used = 64: the same tensors load through the fallback.
	f = edited(t, src, func(e *gguf.KV) bool { return e.Key != "qwen3moe.expert_feed_forward_length" }, nil)
	if m, err = model.Load(f, model.Options{Threads: 1}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if m.Config.ExpertFFN != 64 {
		t.Fatalf("ExpertFFN %d through feed_forward_length/expert_used_count, want 64", m.Config.ExpertFFN)
	}
}
