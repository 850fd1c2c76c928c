package model_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"kiln/convert"
	"kiln/gguf"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/safetensors"
	"kiln/synth"
)

// moeSpecs are smallSpecs' mixtures of experts: qwen3moe (8 experts, so
// llama-quantize's n_expert == 8 rules apply), Mixtral (llama, 4
// experts), qwen2moe with its shared expert, olmoe.
func moeSpecs() []synth.Spec {
	var out []synth.Spec
	for _, s := range smallSpecs {
		if s.Experts > 0 {
			out = append(out, s)
		}
	}
	return out
}

func moeName(s synth.Spec) string {
	if s.Arch == "llama" {
		return "mixtral"
	}
	return s.Arch
}

// synthFolder writes spec (seed 7, type typ) as synth's HF folder.
func synthFolder(t *testing.T, spec synth.Spec, typ string) string {
	t.Helper()
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
	return dir
}

// sameTensors fails unless got holds exactly want's tensors, each with the
// same type, shape and bytes; except that a shared-expert gate may be
// [dim, 1] in got where want has [dim] (convert_hf_to_gguf.py writes HF's
// [1][dim] Linear as [dim, 1]; synth writes the 1-D form; ggml reads both
// as {dim}).
func sameTensors(t *testing.T, what string, got, want *gguf.File) {
	t.Helper()
	if len(got.Tensors) != len(want.Tensors) {
		var g, w []string
		for _, x := range got.Tensors {
			g = append(g, x.Name)
		}
		for _, x := range want.Tensors {
			w = append(w, x.Name)
		}
		t.Fatalf("%s: %d tensors, want %d\n got %v\nwant %v", what, len(g), len(w), g, w)
	}
	for i := range want.Tensors {
		wt := &want.Tensors[i]
		gt, ok := got.Tensor(wt.Name)
		if !ok {
			t.Fatalf("%s: tensor %s is missing", what, wt.Name)
		}
		shape := gt.Shape
		if strings.HasSuffix(wt.Name, "ffn_gate_inp_shexp.weight") {
			if len(shape) != 2 || shape[1] != 1 {
				t.Errorf("%s: %s has shape %v, want [dim, 1] as convert_hf_to_gguf.py writes it", what, wt.Name, shape)
			}
			shape = shape[:1]
		}
		if gt.Type != wt.Type || !slices.Equal(shape, wt.Shape) {
			t.Fatalf("%s: %s is %s %v, want %s %v", what, wt.Name, gt.Type, gt.Shape, wt.Type, wt.Shape)
		}
		if !bytes.Equal(got.Data(gt), want.Data(wt)) {
			t.Fatalf("%s: %s: the bytes differ", what, wt.Name)
		}
	}
}

// TestConvertMoEFolderReproducesGGUF: kiln convert of synth's HF folder of
// each mixture of experts gives the tensors of synth's GGUF of the same
// weights, byte for byte, in F32, F16 and BF16 (stored types kept); from
// the F32 folder with --type Q4_K_M, the tensors kiln quantize makes of
// the F32 GGUF (the same mix rules: qwen3moe's 8 experts take the
// n_expert == 8 ones). The expert metadata is synth's (what
// convert_hf_to_gguf.py writes).
func TestConvertMoEFolderReproducesGGUF(t *testing.T) {
	for _, spec := range moeSpecs() {
		for _, typ := range []string{"F32", "F16", "BF16", "Q4_K_M"} {
			t.Run(moeName(spec)+"-"+typ, func(t *testing.T) {
				src := typ
				if typ == "Q4_K_M" {
					src = "F32"
				}
				dir := synthFolder(t, spec, src)
				wantPath := filepath.Join(t.TempDir(), "synth.gguf")
				if err := tinymodel.Write(wantPath, spec, src, 7); err != nil {
					t.Fatal(err)
				}
				want, err := gguf.Open(wantPath)
				if err != nil {
					t.Fatal(err)
				}
				defer want.Close()
				opts, auto := convert.Options{}, true
				if typ == "Q4_K_M" {
					ft, err := convert.ParseFileType(typ)
					if err != nil {
						t.Fatal(err)
					}
					opts, auto = convert.Options{Scheme: convert.Scheme{FileType: ft}}, false
					q := filepath.Join(t.TempDir(), "q.gguf")
					if _, err := convert.Convert(wantPath, q, opts); err != nil {
						t.Fatal(err)
					}
					if want, err = gguf.Open(q); err != nil {
						t.Fatal(err)
					}
					defer want.Close()
				}
				out := filepath.Join(t.TempDir(), "converted.gguf")
				if _, err := convert.FromHF(dir, out, opts, auto); err != nil {
					t.Fatal(err)
				}
				got, err := gguf.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Close()
				sameTensors(t, "converted", got, want)
				if typ == "Q4_K_M" && spec.Experts == 8 {
					if v, _ := got.Tensor("blk.0.attn_v.weight"); v.Type != gguf.TypeQ8_0 {
						t.Errorf("blk.0.attn_v.weight is %s, want Q8_0 (8 experts)", v.Type)
					}
				}
				for _, k := range []string{"expert_count", "expert_used_count", "expert_feed_forward_length", "expert_shared_feed_forward_length", "feed_forward_length"} {
					key := spec.Arch + "." + k
					w, wok := want.Uint(key)
					g, gok := got.Uint(key)
					if w != g || wok != gok {
						t.Errorf("%s = %d (%v), want %d (%v)", key, g, gok, w, wok)
					}
				}
			})
		}
	}
}

// TestLoadHFMoEErrors: bad mixture-of-experts folders fail with errors
// naming the config key or the tensor, never a panic.
func TestLoadHFMoEErrors(t *testing.T) {
	set := func(k string, v any) func(map[string]any) { return func(c map[string]any) { c[k] = v } }
	del := func(k string) func(map[string]any) { return func(c map[string]any) { delete(c, k) } }
	specs := map[string]synth.Spec{}
	for _, s := range moeSpecs() {
		specs[moeName(s)] = s
	}
	for _, tc := range []struct {
		name, arch string
		edit       func(map[string]any)
		rmTensor   string // an HF tensor to leave out of the folder
		want       []string
	}{
		{"experts per token 0", "qwen3moe", set("num_experts_per_tok", 0), "", []string{"config.json", "num_experts_per_tok = 0 is out of range 1..num_experts (8)"}},
		{"experts per token above experts", "mixtral", set("num_experts_per_tok", 5), "", []string{"config.json", "num_experts_per_tok = 5 is out of range 1..num_local_experts (4)"}},
		{"no experts per token", "olmoe", del("num_experts_per_tok"), "", []string{"config.json", "num_experts_per_tok is missing"}},
		{"no expert count", "qwen2moe", del("num_experts"), "", []string{"config.json", "num_local_experts / num_experts is missing"}},
		{"too many experts", "qwen3moe", set("num_experts", 600), "", []string{"config.json", "num_experts = 600 is out of range 1..512"}},
		{"no moe_intermediate_size", "qwen3moe", del("moe_intermediate_size"), "", []string{"config.json", "moe_intermediate_size is missing"}},
		{"no shared width", "qwen2moe", del("shared_expert_intermediate_size"), "", []string{"config.json", "shared_expert_intermediate_size is missing"}},
		{"norm_topk_prob false", "qwen3moe", set("norm_topk_prob", false), "", []string{"config.json", "norm_topk_prob = false is not supported"}},
		{"norm_topk_prob true", "olmoe", set("norm_topk_prob", true), "", []string{"config.json", "norm_topk_prob = true is not supported"}},
		{"dense layers", "qwen2moe", set("mlp_only_layers", []int{1}), "", []string{"config.json", "mlp_only_layers = [1] is not supported"}},
		{"sparse step", "qwen3moe", set("decoder_sparse_step", 2), "", []string{"config.json", "decoder_sparse_step = 2"}},
		{"olmoe clip_qkv", "olmoe", set("clip_qkv", 8), "", []string{"config.json", "clip_qkv = 8 is not supported"}},
		{"olmoe epsilon", "olmoe", set("rms_norm_eps", 1e-6), "", []string{"config.json", "rms_norm_eps = 1e-06 is not supported"}},
		{"wrong expert width", "qwen3moe", set("moe_intermediate_size", 32), "", []string{"model.layers.0.mlp.experts.0.down_proj.weight has shape [128 64], want [128 32]"}},
		{"wrong expert count", "mixtral", set("num_local_experts", 5), "", []string{"model.layers.0.block_sparse_moe.gate.weight has shape [4 128], want [5 128]"}},
		{"missing expert", "qwen2moe", nil, "model.layers.1.mlp.experts.5.up_proj.weight", []string{"tensor model.layers.1.mlp.experts.5.up_proj.weight is missing"}},
		{"missing mixtral expert", "mixtral", nil, "model.layers.0.block_sparse_moe.experts.3.w2.weight", []string{"tensor model.layers.0.block_sparse_moe.experts.3.w2.weight is missing"}},
		{"missing router", "olmoe", nil, "model.layers.0.mlp.gate.weight", []string{"tensor model.layers.0.mlp.gate.weight is missing"}},
		{"missing shared gate", "qwen2moe", nil, "model.layers.0.mlp.shared_expert_gate.weight", []string{"tensor model.layers.0.mlp.shared_expert_gate.weight is missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := specs[tc.arch]
			f := tinymodel.File(t, spec, "F32", 7)
			dir := ggufToHFWithout(t, f, spec, tc.edit, tc.rmTensor)
			m, err := model.LoadHF(dir, model.Options{Threads: 1})
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
			// kiln convert refuses the folder with the same error.
			if _, err := convert.FromHF(dir, filepath.Join(t.TempDir(), "x.gguf"), convert.Options{}, true); err == nil || !strings.Contains(err.Error(), tc.want[len(tc.want)-1]) {
				t.Fatalf("FromHF error = %v, want one mentioning %q", err, tc.want[len(tc.want)-1])
			}
		})
	}
}

// TestMoEBF16Routers: in an all-BF16 folder (as real checkpoints are,
// routers and norms included) LoadHF widens the routers to F32 as
// convert_hf_to_gguf.py writes them, so the folder computes the logits of
// its kiln convert GGUF bit for bit, and that GGUF's routers are F32.
// (The same folders through llama.cpp's own converter gave byte-identical
// tensors: see the report of the commit that added this test.)
func TestMoEBF16Routers(t *testing.T) {
	prompt := []int32{1, 17, 230, 5, 99, 311, 42, 8, 150, 260, 3, 77}
	for _, spec := range moeSpecs() {
		t.Run(moeName(spec), func(t *testing.T) {
			dir := synthFolder(t, spec, "BF16")
			allBF16(t, dir)
			got := loadHF(t, dir)
			out := filepath.Join(t.TempDir(), "converted.gguf")
			if _, err := convert.FromHF(dir, out, convert.Options{}, true); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, ti := range f.Tensors {
				if strings.Contains(ti.Name, "ffn_gate_inp") && ti.Type != gguf.TypeF32 {
					t.Errorf("%s is %s, want F32", ti.Name, ti.Type)
				}
			}
			want, err := model.Load(f, model.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			sameLogits(t, "all-BF16 folder", newRunner(t, got, len(prompt), true).feed(prompt...),
				newRunner(t, want, len(prompt), true).feed(prompt...))
		})
	}
}

// allBF16 rewrites the single-file folder dir with every F32 tensor
// truncated to BF16.
func allBF16(t *testing.T, dir string) {
	t.Helper()
	rewriteHF(t, dir, func(ts []safetensors.WriteTensor) []safetensors.WriteTensor {
		for i := range ts {
			if ts[i].DType == "F32" {
				bf := make([]byte, len(ts[i].Data)/2)
				for j := 0; j < len(ts[i].Data); j += 4 {
					copy(bf[j/2:], ts[i].Data[j+2:j+4]) // the high half, little-endian
				}
				ts[i].Data, ts[i].DType = bf, "BF16"
			}
		}
		return ts
	})
}

// TestLoadHFFusedExperts: a folder whose experts are stored fused
// (mlp.experts.gate_up_proj, newer transformers) is refused with an error
// that says so.
func TestLoadHFFusedExperts(t *testing.T) {
	dir := synthFolder(t, moeSpecs()[0], "F32") // qwen3moe
	rewriteHF(t, dir, func(ts []safetensors.WriteTensor) []safetensors.WriteTensor {
		var out []safetensors.WriteTensor
		for _, x := range ts {
			if !strings.Contains(x.Name, ".mlp.experts.") {
				out = append(out, x)
			}
		}
		return append(out, safetensors.WriteTensor{Name: "model.layers.0.mlp.experts.gate_up_proj", DType: "F32", Shape: []uint64{1}, Data: make([]byte, 4)})
	})
	_, err := model.LoadHF(dir, model.Options{Threads: 1})
	if err == nil || !strings.Contains(err.Error(), "mlp.experts.0.down_proj.weight is missing") ||
		!strings.Contains(err.Error(), "fused as model.layers.0.mlp.experts.gate_up_proj") {
		t.Fatalf("LoadHF error = %v", err)
	}
}

// TestLoadHFMixedExpertDTypes: experts of one 3-D tensor in different
// dtypes are refused, naming the tensor.
func TestLoadHFMixedExpertDTypes(t *testing.T) {
	dir := synthFolder(t, moeSpecs()[2], "F32") // qwen2moe
	const name = "model.layers.1.mlp.experts.3.gate_proj.weight"
	rewriteHF(t, dir, func(ts []safetensors.WriteTensor) []safetensors.WriteTensor {
		for i := range ts {
			if ts[i].Name == name {
				ts[i].DType, ts[i].Data = "F16", ts[i].Data[:len(ts[i].Data)/2]
			}
		}
		return ts
	})
	_, err := model.LoadHF(dir, model.Options{Threads: 1})
	if err == nil || !strings.Contains(err.Error(), "tensor "+name+" is F16, expert 0's is F32: the experts of blk.1.ffn_gate_exps.weight must share a dtype") {
		t.Fatalf("LoadHF error = %v", err)
	}
}

// rewriteHF rewrites the single-file folder dir's tensors through edit.
func rewriteHF(t *testing.T, dir string, edit func([]safetensors.WriteTensor) []safetensors.WriteTensor) {
	t.Helper()
	path := filepath.Join(dir, "model.safetensors")
	sf, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var ts []safetensors.WriteTensor
	for i := range sf.Tensors {
		st := &sf.Tensors[i]
		ts = append(ts, safetensors.WriteTensor{Name: st.Name, DType: st.DType, Shape: st.Shape, Data: append([]byte(nil), sf.Data(st)...)})
	}
	sf.Close()
	if err := safetensors.WriteFile(path, map[string]string{"format": "pt"}, edit(ts)); err != nil {
		t.Fatal(err)
	}
}

// llamaCppConverted is testdata/convert/moe-llamacpp.json: what llama.cpp's
// convert_hf_to_gguf.py wrote for synth's MoE folders
// (scripts/moe-convert-goldens.sh). A sha256 is its first 16 hex digits.
type llamaCppConverted struct {
	Commit string `json:"llama_cpp_commit"`
	Models []struct {
		Name    string     `json:"name"`
		Spec    synth.Spec `json:"spec"`
		Type    string     `json:"type"`
		Seed    uint64     `json:"seed"`
		AllBF16 bool       `json:"all_bf16"`
		HF      map[string]struct {
			DType  string   `json:"dtype"`
			Shape  []uint64 `json:"shape"`
			SHA256 string   `json:"sha256"`
		} `json:"hf_tensors"`
		Tensors map[string]struct {
			Type   string   `json:"type"`
			Shape  []uint64 `json:"shape"`
			SHA256 string   `json:"sha256"`
		} `json:"tensors"`
		Metadata map[string]any `json:"metadata"`
	} `json:"models"`
}

// TestConvertMoEMatchesLlamaCpp: synth writes each recorded folder
// (Qwen3-MoE, Mixtral, Qwen2-MoE, OLMoE; F32, BF16, and all-BF16 with the
// routers and norms BF16 too) as it was when llama.cpp's own converter ran
// on it, and kiln convert of it writes exactly the tensors that converter
// wrote (names, types, shapes, bytes) and the same model metadata
// (tokenizer keys and the folder-derived general.name, basename, finetune
// and size_label aside).
func TestConvertMoEMatchesLlamaCpp(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "convert", "moe-llamacpp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g llamaCppConverted
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Models) != 12 {
		t.Fatalf("%d recorded models, want 4 architectures x 3 folders", len(g.Models))
	}
	for _, rec := range g.Models {
		t.Run(rec.Name, func(t *testing.T) {
			scheme, err := convert.ParseScheme(rec.Type)
			if err != nil {
				t.Fatal(err)
			}
			sm, err := synth.Plan(rec.Spec, nil, scheme, rec.Seed)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), rec.Name)
			if err := sm.WriteHF(dir); err != nil {
				t.Fatal(err)
			}
			if rec.AllBF16 {
				allBF16(t, dir)
			}
			// The folder is the one llama.cpp converted: HF names, one
			// tensor per expert, llama's q/k rows in rotate_half order.
			sf, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			defer sf.Close()
			if len(sf.Tensors) != len(rec.HF) {
				t.Errorf("the folder holds %d tensors, llama.cpp's held %d", len(sf.Tensors), len(rec.HF))
			}
			for name, want := range rec.HF {
				st, ok := sf.Tensor(name)
				if !ok {
					t.Errorf("the folder lacks %s", name)
					continue
				}
				sum := sha256.Sum256(sf.Data(st))
				if string(st.DType) != want.DType || !slices.Equal(st.Shape, want.Shape) || hex.EncodeToString(sum[:8]) != want.SHA256 {
					t.Errorf("folder tensor %s: %s %v sha256 %x, llama.cpp converted %s %v %s", name, st.DType, st.Shape, sum[:6], want.DType, want.Shape, want.SHA256)
				}
			}
			out := filepath.Join(t.TempDir(), "kiln.gguf")
			if _, err := convert.FromHF(dir, out, convert.Options{}, true); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if len(f.Tensors) != len(rec.Tensors) {
				t.Errorf("%d tensors, llama.cpp wrote %d", len(f.Tensors), len(rec.Tensors))
			}
			for name, want := range rec.Tensors {
				ti, ok := f.Tensor(name)
				if !ok {
					t.Errorf("tensor %s is missing", name)
					continue
				}
				sum := sha256.Sum256(f.Data(ti))
				if ti.Type.String() != want.Type || !slices.Equal(ti.Shape, want.Shape) || hex.EncodeToString(sum[:8]) != want.SHA256 {
					t.Errorf("%s: %s %v sha256 %x, llama.cpp wrote %s %v %s", name, ti.Type, ti.Shape, sum[:6], want.Type, want.Shape, want.SHA256)
				}
			}
			keys := 0
			for _, kv := range f.KV {
				if !strings.HasPrefix(kv.Key, "tokenizer.") && kv.Key != "general.name" {
					keys++
				}
			}
			if keys != len(rec.Metadata) {
				t.Errorf("%d model metadata keys, llama.cpp wrote %d", keys, len(rec.Metadata))
			}
			for key, want := range rec.Metadata {
				v, ok := f.Value(key)
				if !ok {
					t.Errorf("metadata %s is missing (llama.cpp: %v)", key, want)
					continue
				}
				switch w := want.(type) {
				case float64:
					if u, ok := v.Uint(); ok && float64(u) == w {
						continue
					}
					if x, ok := v.Float(); ok && float32(x) == float32(w) {
						continue
					}
				case string:
					if s, ok := v.String(); ok && s == w {
						continue
					}
				}
				t.Errorf("metadata %s = %v, llama.cpp wrote %v", key, v, want)
			}
		})
	}
}

// TestLoadHFMoENoCopy: LoadHF maps a folder's experts where they lie (one
// view per expert's HF tensor) instead of stacking them into new memory:
// loading an F32 folder whose experts hold 12.6 MB grows the Go heap by
// 30 KB (measured: the small tensors and bookkeeping); the bound is 256 KB.
func TestLoadHFMoENoCopy(t *testing.T) {
	spec := synth.Spec{Arch: "qwen3moe", Dim: 256, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, FFN: 512, VocabSize: 400,
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 256}
	dir := synthFolder(t, spec, "F32")
	const expertBytes = 2 * 8 * 3 * 256 * 256 * 4
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := model.LoadHF(dir, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew %d bytes; the experts hold %d", grew, expertBytes)
	if got := m.ExpertBytes(); got != expertBytes {
		t.Fatalf("ExpertBytes = %d, want %d", got, expertBytes)
	}
	if grew > 256<<10 {
		t.Errorf("loading grew the heap by %d bytes: the experts (%d bytes) were copied", grew, expertBytes)
	}
}
