package model_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kiln/convert"
	"kiln/gguf"
	"kiln/model"
	"kiln/safetensors"
	"kiln/synth"
	"kiln/tokenizer"
)

var hfArchNames = map[string]string{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
	"qwen3moe": "Qwen3MoeForCausalLM", "qwen2moe": "Qwen2MoeForCausalLM", "olmoe": "OlmoeForCausalLM"}

// ggufToHF writes f (a synth model) as a Hugging Face folder: the inverse
// of convert_hf_to_gguf.py (HF names; llama q/k rows back to rotate_half
// order), config.json from the spec. Tied llama models store only
// lm_head.weight, tied qwen models only the embedding, as real checkpoints
// do. edit, when set, may change the config map before it is written.
func ggufToHF(t testing.TB, f *gguf.File, spec synth.Spec, edit func(cfg map[string]any)) string {
	t.Helper()
	return ggufToHFWithout(t, f, spec, edit, "")
}

// ggufToHFWithout is ggufToHF leaving the HF tensor drop out of the folder.
func ggufToHFWithout(t testing.TB, f *gguf.File, spec synth.Spec, edit func(cfg map[string]any), drop string) string {
	t.Helper()
	c, err := model.ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	emb, _ := f.Tensor("token_embd.weight")
	cfg := map[string]any{
		"architectures":           []string{hfArchNames[c.Arch]},
		"hidden_size":             c.Dim,
		"num_hidden_layers":       c.Layers,
		"num_attention_heads":     c.Heads,
		"num_key_value_heads":     c.KVHeads,
		"head_dim":                c.HeadDim,
		"intermediate_size":       c.FFN,
		"vocab_size":              emb.Shape[1],
		"max_position_embeddings": c.Context,
		"rms_norm_eps":            c.NormEps,
		"rope_theta":              c.RopeBase,
		"tie_word_embeddings":     spec.Tied,
		"hidden_act":              "silu",
		"rope_scaling":            nil,
	}
	if r := spec.RopeScaling; r != nil {
		cfg["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": r.Factor, "low_freq_factor": r.LowFreqFactor,
			"high_freq_factor": r.HighFreqFactor, "original_max_position_embeddings": r.OriginalContext}
	}
	if c.MoE() {
		cfg["num_experts_per_tok"] = c.ExpertsUsed
		switch c.Arch {
		case "llama":
			cfg["architectures"] = []string{"MixtralForCausalLM"}
			cfg["num_local_experts"] = c.Experts
		case "olmoe":
			cfg["num_experts"] = c.Experts
		default:
			cfg["num_experts"] = c.Experts
			cfg["moe_intermediate_size"] = c.ExpertFFN
			if c.SharedFFN > 0 {
				cfg["shared_expert_intermediate_size"] = c.SharedFFN
			}
		}
	}
	if edit != nil {
		edit(cfg)
	}
	dir := t.TempDir()
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight", "output.weight": "lm_head.weight"}
	if spec.Tied && c.Arch == "llama" {
		names["token_embd.weight"] = "lm_head.weight"
	}
	for g, h := range map[string]string{"attn_norm.weight": "input_layernorm.weight", "attn_q.weight": "self_attn.q_proj.weight",
		"attn_k.weight": "self_attn.k_proj.weight", "attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
		"attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias", "attn_v.bias": "self_attn.v_proj.bias",
		"attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
		"ffn_norm.weight": "post_attention_layernorm.weight", "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
		"ffn_down.weight": "mlp.down_proj.weight"} {
		for i := 0; i < c.Layers; i++ {
			names[fmt.Sprintf("blk.%d.%s", i, g)] = fmt.Sprintf("model.layers.%d.%s", i, h)
		}
	}
	// Mixture of experts: the router, the shared expert, and each 3-D
	// expert tensor split into one HF tensor per expert (experts[g] is the
	// name pattern of expert %d's slice).
	experts := map[string]string{}
	for i := 0; i < c.Layers; i++ {
		g, h := fmt.Sprintf("blk.%d.", i), fmt.Sprintf("model.layers.%d.", i)
		if c.Arch == "llama" {
			names[g+"ffn_gate_inp.weight"] = h + "block_sparse_moe.gate.weight"
			for gg, w := range map[string]string{"gate": "w1", "down": "w2", "up": "w3"} {
				experts[g+"ffn_"+gg+"_exps.weight"] = h + "block_sparse_moe.experts.%d." + w + ".weight"
			}
			continue
		}
		names[g+"ffn_gate_inp.weight"] = h + "mlp.gate.weight"
		names[g+"ffn_gate_inp_shexp.weight"] = h + "mlp.shared_expert_gate.weight"
		for _, gg := range []string{"gate", "up", "down"} {
			experts[g+"ffn_"+gg+"_exps.weight"] = h + "mlp.experts.%d." + gg + "_proj.weight"
			names[g+"ffn_"+gg+"_shexp.weight"] = h + "mlp.shared_expert." + gg + "_proj.weight"
		}
	}
	dtypes := map[gguf.Type]safetensors.DType{gguf.TypeF32: "F32", gguf.TypeF16: "F16", gguf.TypeBF16: "BF16"}
	var ts []safetensors.WriteTensor
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if pat, ok := experts[ti.Name]; ok {
			data := f.Data(ti)
			n := len(data) / int(ti.Shape[2])
			for e := 0; e < int(ti.Shape[2]); e++ {
				if fmt.Sprintf(pat, e) == drop {
					continue
				}
				ts = append(ts, safetensors.WriteTensor{Name: fmt.Sprintf(pat, e), DType: dtypes[ti.Type],
					Shape: []uint64{ti.Shape[1], ti.Shape[0]}, Data: append([]byte(nil), data[e*n:(e+1)*n]...)})
			}
			continue
		}
		h, ok := names[ti.Name]
		if !ok || h == drop {
			continue // rope_freqs.weight: config.json's rope_scaling carries it
		}
		dt, ok := dtypes[ti.Type]
		if !ok {
			t.Fatalf("%s: type %s", ti.Name, ti.Type)
		}
		shape := []uint64{ti.Shape[0]}
		if len(ti.Shape) == 2 {
			shape = []uint64{ti.Shape[1], ti.Shape[0]}
		}
		if strings.HasSuffix(ti.Name, "ffn_gate_inp_shexp.weight") {
			shape = []uint64{1, ti.Shape[0]} // a Linear(hidden, 1)
		}
		data := append([]byte(nil), f.Data(ti)...)
		heads := 0
		if c.Arch == "llama" && strings.HasSuffix(ti.Name, "attn_q.weight") {
			heads = c.Heads
		} else if c.Arch == "llama" && strings.HasSuffix(ti.Name, "attn_k.weight") {
			heads = c.KVHeads
		}
		if heads > 0 { // GGUF [h][j][s] -> HF [h][s][j]
			rb := len(data) / int(shape[0])
			half := int(shape[0]) / heads / 2
			out := make([]byte, len(data))
			for r := 0; r < int(shape[0]); r++ {
				h, s, j := r/(2*half), (r/half)%2, r%half
				src := h*2*half + 2*j + s
				copy(out[r*rb:], data[src*rb:(src+1)*rb])
			}
			data = out
		}
		ts = append(ts, safetensors.WriteTensor{Name: h, DType: dt, Shape: shape, Data: data})
	}
	// Two shards and an index, to load through model.safetensors.index.json.
	half := len(ts) / 2
	wm := map[string]string{}
	for i, part := range [][]safetensors.WriteTensor{ts[:half], ts[half:]} {
		name := fmt.Sprintf("model-%05d-of-00002.safetensors", i+1)
		if err := safetensors.WriteFile(filepath.Join(dir, name), map[string]string{"format": "pt"}, part); err != nil {
			t.Fatal(err)
		}
		for _, x := range part {
			wm[x.Name] = name
		}
	}
	b, _ = json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": wm})
	if err := os.WriteFile(filepath.Join(dir, safetensors.IndexName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHFMatchesSynthGGUF: for every architecture (llama untied, llama tied
// with llama3 rope scaling stored as lm_head only, qwen2 with biases, qwen3
// with q/k norms and a head width apart from Dim/Heads; the mixtures of
// experts qwen3moe, Mixtral, qwen2moe with its shared expert, olmoe), in
// F32, F16 and BF16, a GGUF model exported to a sharded HF folder (by this
// test's own naming, one tensor per expert) loads with LoadHF to the same
// config and bit-identical logits.
func TestHFMatchesSynthGGUF(t *testing.T) {
	prompt := []int32{1, 17, 230, 5, 99, 311, 42, 8, 150, 260, 3, 77}
	for _, spec := range smallSpecs {
		for _, typ := range []string{"F32", "F16", "BF16"} {
			name := spec.Arch
			if spec.RopeScaling != nil {
				name += "-llama3rope"
			}
			if spec.Arch == "llama" && spec.Experts > 0 {
				name = "mixtral"
			}
			t.Run(name+"-"+typ, func(t *testing.T) {
				f, want := synthModel(t, spec, typ)
				got := loadHF(t, ggufToHF(t, f, spec, nil))
				if g, w := got.Config, want.Config; g != w {
					t.Fatalf("config\n got %+v\nwant %+v", g, w)
				}
				la := newRunner(t, got, len(prompt), true).feed(prompt...)
				lb := newRunner(t, want, len(prompt), true).feed(prompt...)
				for p := range la {
					for i := range la[p] {
						if math.Float32bits(la[p][i]) != math.Float32bits(lb[p][i]) {
							t.Fatalf("position %d logit %d: HF %g, GGUF %g", p, i, la[p][i], lb[p][i])
						}
					}
				}
			})
		}
	}
}

// TestSynthHFFolder: synth's own Hugging Face folder (Model.WriteHF,
// kiln synth --format hf) loads with LoadHF to the Config and bit-identical
// logits of the GGUF synth writes with the same spec and seed, for every
// architecture in F32, F16 and BF16; so does its kiln convert GGUF, and the
// F32 folder quantized on load to Q8_0 equals synth's Q8_0 GGUF. Its
// tokenizer files give the GGUF vocabulary's tokens.
func TestSynthHFFolder(t *testing.T) {
	prompt := []int32{1, 17, 230, 5, 99, 311, 42, 8, 150, 260, 3, 77}
	for _, spec := range smallSpecs {
		for _, typ := range []string{"F32", "F16", "BF16"} {
			name := spec.Arch
			if spec.RopeScaling != nil {
				name += "-llama3rope"
			}
			if spec.Arch == "llama" && spec.Experts > 0 {
				name = "mixtral"
			}
			t.Run(name+"-"+typ, func(t *testing.T) {
				f, want := synthModel(t, spec, typ) // seed 7
				scheme, err := convert.ParseScheme(typ)
				if err != nil {
					t.Fatal(err)
				}
				sm, err := synth.Plan(spec, nil, scheme, 7)
				if err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(t.TempDir(), "hf")
				if err := sm.WriteHF(dir); err != nil {
					t.Fatal(err)
				}
				got := loadHF(t, dir)
				if g, w := got.Config, want.Config; g != w {
					t.Fatalf("config\n got %+v\nwant %+v", g, w)
				}
				la := newRunner(t, got, len(prompt), true).feed(prompt...)
				lb := newRunner(t, want, len(prompt), true).feed(prompt...)
				for p := range la {
					for i := range la[p] {
						if math.Float32bits(la[p][i]) != math.Float32bits(lb[p][i]) {
							t.Fatalf("position %d logit %d: HF %g, GGUF %g", p, i, la[p][i], lb[p][i])
						}
					}
				}
				// kiln convert of the folder loads to the same logits.
				cpath := filepath.Join(t.TempDir(), "converted.gguf")
				if _, err := convert.FromHF(dir, cpath, convert.Options{}, true); err != nil {
					t.Fatal(err)
				}
				cf, err := gguf.Open(cpath)
				if err != nil {
					t.Fatal(err)
				}
				defer cf.Close()
				conv, err := model.Load(cf, model.Options{Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				defer conv.Close()
				sameLogits(t, "converted", newRunner(t, conv, len(prompt), true).feed(prompt...), lb)
				if typ == "F32" {
					// Quantized on load from the F32 folder = synth's Q8_0 GGUF
					// (both encode the same float32 rows).
					_, q8 := synthModel(t, spec, "Q8_0")
					onLoad, _, err := convert.LoadHF(dir, convert.Options{Scheme: convert.Scheme{FileType: convert.FileTypeQ8_0, Pure: true}}, model.Options{Threads: 2})
					if err != nil {
						t.Fatal(err)
					}
					defer onLoad.Close()
					sameLogits(t, "Q8_0 on load", newRunner(t, onLoad, len(prompt), true).feed(prompt...),
						newRunner(t, q8, len(prompt), true).feed(prompt...))
				}
				hv, err := tokenizer.LoadHFTokenizer(dir)
				if err != nil {
					t.Fatal(err)
				}
				gv, err := tokenizer.VocabFromGGUF(f)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(hv.Tokens, gv.Tokens) || hv.BOS != gv.BOS || hv.EOS != gv.EOS || hv.AddBOS != gv.AddBOS {
					t.Errorf("tokenizer.json: %d tokens BOS %d EOS %d add %v; GGUF %d %d %d %v", hv.Size(), hv.BOS, hv.EOS, hv.AddBOS, gv.Size(), gv.BOS, gv.EOS, gv.AddBOS)
				}
			})
		}
	}
}

// sameLogits fails unless a and b are bit-identical.
func sameLogits(t *testing.T, what string, a, b [][]float32) {
	t.Helper()
	for p := range a {
		for i := range a[p] {
			if math.Float32bits(a[p][i]) != math.Float32bits(b[p][i]) {
				t.Fatalf("%s: position %d logit %d: %g, want %g", what, p, i, a[p][i], b[p][i])
			}
		}
	}
}

// TestLoadHFErrors: bad folders fail with errors naming the file and the
// field or tensor.
func TestLoadHFErrors(t *testing.T) {
	spec := smallSpecs[0]
	f, _ := synthModel(t, spec, "F32")
	set := func(k string, v any) func(map[string]any) { return func(c map[string]any) { c[k] = v } }
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
		rm   string // file to remove
		want []string
	}{
		{"unsupported architecture", set("architectures", []string{"GPT2LMHeadModel"}), "", []string{"config.json", `architectures[0] "GPT2LMHeadModel" is not supported`}},
		{"missing field", func(c map[string]any) { delete(c, "hidden_size") }, "", []string{"config.json", "hidden_size is missing"}},
		{"bad kv heads", set("num_key_value_heads", 3), "", []string{"config.json", "not a multiple of 3 KV heads"}},
		{"yarn", set("rope_scaling", map[string]any{"rope_type": "yarn", "factor": 4}), "", []string{"config.json", `rope_scaling.rope_type "yarn" is not supported`}},
		{"gelu", set("hidden_act", "gelu"), "", []string{"config.json", `hidden_act "gelu"`}},
		{"shape mismatch", set("intermediate_size", 512), "", []string{"-of-00002.safetensors", "model.layers.0.mlp.gate_proj.weight has shape [256 128], want [512 128]"}},
		{"missing tensor", set("num_hidden_layers", 3), "", []string{"tensor model.layers.2.input_layernorm.weight is missing"}},
		{"tied, lm_head stored too", set("tie_word_embeddings", true), "", nil}, // loads: lm_head is unused
		{"missing config", nil, "config.json", []string{"config.json", "no such file"}},
		{"missing shard", nil, "model-00002-of-00002.safetensors", []string{"model-00002-of-00002.safetensors", safetensors.IndexName}},
		{"no weights", nil, safetensors.IndexName, []string{"neither model.safetensors nor " + safetensors.IndexName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ggufToHF(t, f, spec, tc.edit)
			if tc.rm != "" {
				if err := os.Remove(filepath.Join(dir, tc.rm)); err != nil {
					t.Fatal(err)
				}
			}
			m, err := model.LoadHF(dir, model.Options{Threads: 1})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				m.Close()
				return
			}
			if err == nil {
				m.Close()
				t.Fatalf("LoadHF succeeded, want an error mentioning %q", tc.want)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) || !strings.HasPrefix(err.Error(), "model: ") {
					t.Fatalf("LoadHF error = %v, want one mentioning %q", err, w)
				}
			}
		})
	}
	t.Run("untied without lm_head", func(t *testing.T) {
		qspec := smallSpecs[2] // tied qwen2: the folder holds only the embedding
		qf, _ := synthModel(t, qspec, "F32")
		_, err := model.LoadHF(ggufToHF(t, qf, qspec, set("tie_word_embeddings", false)), model.Options{Threads: 1})
		if err == nil || !strings.Contains(err.Error(), "tensor lm_head.weight is missing") {
			t.Fatalf("LoadHF error = %v", err)
		}
	})
}
