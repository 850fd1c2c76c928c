package synth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln/convert"
	"kiln/gguf"
	"kiln/safetensors"
)

// TestWriteHFShards: past the shard size the weights go to numbered
// shards with an index naming every tensor once; the folder reads back
// (config.json as ConfigFromHF takes it, the tensors at their HF shapes).
// (model's TestSynthHFFolder checks that the weights are the GGUF's.)
func TestWriteHFShards(t *testing.T) {
	s := small("qwen2")
	m, err := Plan(s, nil, convert.Scheme{FileType: convert.FileTypeBF16, Pure: true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hf")
	if err := m.writeHF(dir, 200_000); err != nil {
		t.Fatal(err)
	}
	set, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if len(set.Files) < 3 {
		t.Fatalf("%d shards, want several of at most 200 kB", len(set.Files))
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	b, err := os.ReadFile(filepath.Join(dir, safetensors.IndexName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	// embedding, final norm, lm_head, 12 per layer (with 3 biases).
	if want := 3 + 12*s.Layers; len(idx.WeightMap) != want {
		t.Errorf("index names %d tensors, want %d", len(idx.WeightMap), want)
	}
	for name, want := range map[string][]uint64{
		"model.embed_tokens.weight":              {300, 256},
		"model.layers.1.self_attn.k_proj.weight": {128, 256},
		"model.layers.0.self_attn.q_proj.bias":   {256},
	} {
		tn, _, ok := set.Tensor(name)
		if !ok || len(tn.Shape) != len(want) || tn.Shape[0] != want[0] || tn.Shape[len(want)-1] != want[len(want)-1] {
			t.Errorf("%s: %v %v, want shape %v", name, ok, tn, want)
		}
	}
	for _, f := range []string{"config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var cfg map[string]any
	b, _ = os.ReadFile(filepath.Join(dir, "config.json"))
	if err := json.Unmarshal(b, &cfg); err != nil || cfg["torch_dtype"] != "bfloat16" || cfg["architectures"].([]any)[0] != "Qwen2ForCausalLM" {
		t.Errorf("config.json: %v %s", err, b)
	}
}

// TestWriteHFRefusals: quantized weights and a folder with files in it
// are errors, before anything is written.
func TestWriteHFRefusals(t *testing.T) {
	q, err := Plan(small("llama"), nil, convert.Scheme{FileType: convert.FileTypeQ8_0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "q")
	if err := q.WriteHF(dir); err == nil || !strings.Contains(err.Error(), "F32, F16 or BF16") || !strings.Contains(err.Error(), gguf.TypeQ8_0.String()) {
		t.Errorf("Q8_0: %v", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("Q8_0: the folder was created")
	}
	f, err := Plan(small("qwen3"), nil, convert.Scheme{FileType: convert.FileTypeF32}, 1)
	if err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteHF(full); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty folder: %v", err)
	}
}

// TestWriteHFFailureLeavesNothing: a write that fails part-way (here: a
// tensor the folder needs is missing, found after config.json and the
// tokenizer files are written) leaves no folder and no temporary folder.
func TestWriteHFFailureLeavesNothing(t *testing.T) {
	m, err := Plan(small("llama"), nil, convert.Scheme{FileType: convert.FileTypeF32}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Tensors, m.Types = m.Tensors[:len(m.Tensors)-1], m.Types[:len(m.Types)-1]
	parent := t.TempDir()
	dir := filepath.Join(parent, "hf")
	if err := m.WriteHF(dir); err == nil || !strings.Contains(err.Error(), "which the model lacks") {
		t.Fatalf("WriteHF without a tensor: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a failed write left %v", entries)
	}
}
