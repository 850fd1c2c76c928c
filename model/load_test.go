package model_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
	"kiln/model"
)

// rewrite copies stories260K.gguf with its metadata and tensors passed
// through edit functions (return false to drop), and opens the result.
func rewrite(t *testing.T, kv func(*gguf.KV) bool, tensor func(*gguf.TensorInfo) bool) *gguf.File {
	t.Helper()
	src, err := gguf.Open(testutil.SharedModel(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := gguf.NewWriter()
	for _, e := range src.KV {
		if kv == nil || kv(&e) {
			w.Add(e.Key, e.Value)
		}
	}
	for i := range src.Tensors {
		ti := src.Tensors[i]
		if tensor == nil || tensor(&ti) {
			if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, src.Data(&src.Tensors[i])); err != nil {
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

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name   string
		kv     func(*gguf.KV) bool
		tensor func(*gguf.TensorInfo) bool
		want   string
	}{
		{"unknown architecture", func(e *gguf.KV) bool {
			if e.Key == "general.architecture" {
				e.Value = gguf.StringValue("gpt2")
			}
			return true
		}, nil, `architecture "gpt2" is not supported`},
		{"missing tensor", nil, func(ti *gguf.TensorInfo) bool { return ti.Name != "blk.3.ffn_up.weight" }, "blk.3.ffn_up.weight is missing"},
		{"missing metadata", func(e *gguf.KV) bool { return e.Key != "llama.block_count" }, nil, "llama.block_count is missing"},
		{"heads not divisible", func(e *gguf.KV) bool {
			if e.Key == "llama.attention.head_count_kv" {
				e.Value = gguf.Uint32Value(3)
			}
			return true
		}, nil, "not a multiple of 3 KV heads"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := rewrite(t, tc.kv, tc.tensor)
			_, err := model.Load(f, model.Options{Threads: 1})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "model: ") {
				t.Fatalf("Load error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	// Bad RoPE scaling metadata: a clear error naming the key.
	ropeCases := []struct {
		name string
		kv   map[string]gguf.Value
		want string
	}{
		{"unknown type", map[string]gguf.Value{"llama.rope.scaling.type": gguf.StringValue("longrope")},
			`llama.rope.scaling.type "longrope" is not supported`},
		{"yarn without factor", map[string]gguf.Value{"llama.rope.scaling.type": gguf.StringValue("yarn")},
			"yarn needs llama.rope.scaling.factor"},
		{"yarn factor 0", map[string]gguf.Value{"llama.rope.scaling.type": gguf.StringValue("yarn"),
			"llama.rope.scaling.factor": gguf.Float32Value(0)}, "llama.rope.scaling.factor = 0 must be positive"},
		{"negative factor", map[string]gguf.Value{"llama.rope.scaling.type": gguf.StringValue("linear"),
			"llama.rope.scaling.factor": gguf.Float32Value(-2)}, "llama.rope.scaling.factor = -2 must be positive"},
		{"negative scale_linear", map[string]gguf.Value{"llama.rope.scale_linear": gguf.Float32Value(-2)},
			"llama.rope.scale_linear = -2 must be positive"},
		{"original context 0", map[string]gguf.Value{"llama.rope.scaling.type": gguf.StringValue("yarn"),
			"llama.rope.scaling.factor": gguf.Float32Value(4), "llama.rope.scaling.original_context_length": gguf.Uint32Value(0)},
			"llama.rope.scaling.original_context_length = 0 must be a positive integer"},
		{"attn factor 0", map[string]gguf.Value{"llama.rope.scaling.attn_factor": gguf.Float32Value(0)},
			"llama.rope.scaling.attn_factor = 0 must be positive"},
	}
	for _, tc := range ropeCases {
		t.Run(tc.name, func(t *testing.T) {
			src := rewrite(t, nil, nil)
			w := gguf.NewWriter()
			for _, e := range src.KV {
				w.Add(e.Key, e.Value)
			}
			for _, k := range slices.Sorted(maps.Keys(tc.kv)) {
				w.Add(k, tc.kv[k])
			}
			for i := range src.Tensors {
				ti := src.Tensors[i]
				if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, src.Data(&src.Tensors[i])); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(t.TempDir(), "rope.gguf")
			if err := w.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := model.Load(f, model.Options{Threads: 1}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	t.Run("vocab-only file", func(t *testing.T) {
		f, err := gguf.Open(filepath.Join(testutil.SharedModels(t), "llamacpp-vocab", "ggml-vocab-llama-spm.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := model.Load(f, model.Options{Threads: 1}); err == nil || !strings.Contains(err.Error(), "token_embd.weight is missing") {
			t.Fatalf("Load error = %v, want a missing-tensor error", err)
		}
	})
}
