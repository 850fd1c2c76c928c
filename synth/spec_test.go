package synth

import (
	"strings"
	"testing"
)

func validLlama() Spec {
	return Spec{Arch: "llama", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 128, VocabSize: 300}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Spec)
		want string // substring of the error; "" means valid
	}{
		{"valid", func(s *Spec) {}, ""},
		{"defaults", func(s *Spec) { s.KVHeads, s.HeadDim, s.Ctx = 0, 0, 0 }, ""},
		{"no arch", func(s *Spec) { s.Arch = "" }, "no architecture"},
		{"bad arch", func(s *Spec) { s.Arch = "gpt2" }, `architecture "gpt2"`},
		{"zero dim", func(s *Spec) { s.Dim = 0 }, "dim is 0"},
		{"negative layers", func(s *Spec) { s.Layers = -1 }, "layers is -1"},
		{"huge ffn", func(s *Spec) { s.FFN = 1 << 30 }, "ffn is"},
		{"gqa", func(s *Spec) { s.KVHeads = 3 }, "not a multiple of kv-heads 3"},
		{"dim not heads multiple", func(s *Spec) { s.Heads, s.KVHeads = 3, 3 }, "set head-dim"},
		{"odd head dim", func(s *Spec) { s.HeadDim = 15 }, "odd"},
		{"explicit head dim", func(s *Spec) { s.Heads, s.KVHeads, s.HeadDim = 3, 3, 32 }, ""},
		{"negative vocab", func(s *Spec) { s.VocabSize = -5 }, "vocab size"},
		{"theta", func(s *Spec) { s.RopeTheta = -1 }, "rope theta"},
		{"eps", func(s *Spec) { s.NormEps = 2 }, "epsilon"},
		{"rope scaling on qwen2", func(s *Spec) {
			s.Arch = "qwen2"
			s.RopeScaling = &Llama3Rope{Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 8192}
		}, "needs arch llama"},
		{"rope scaling factors", func(s *Spec) {
			s.RopeScaling = &Llama3Rope{Factor: 8, LowFreqFactor: 4, HighFreqFactor: 4, OriginalContext: 8192}
		}, "low-freq-factor < high-freq-factor"},
		{"two errors", func(s *Spec) { s.Dim, s.Layers = 0, 0 }, "layers is 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validLlama()
			tt.edit(&s)
			err := s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Validate accepted %+v, want error containing %q", s, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Validate error %q, want it to contain %q", err, tt.want)
			case err != nil && !strings.HasPrefix(err.Error(), "synth: "):
				t.Fatalf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestShapesValid(t *testing.T) {
	for _, name := range ShapeNames() {
		s, ok := Shape(name)
		if !ok || s.Name != name {
			t.Fatalf("Shape(%q) = %+v, %v", name, s, ok)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, ok := Shape("gpt-5"); ok {
		t.Error("Shape accepted an unknown name")
	}
	// Shape hands out copies: editing one must not change the table.
	a, _ := Shape("llama-3.2-1b")
	a.RopeScaling.Factor = 1
	b, _ := Shape("llama-3.2-1b")
	if b.RopeScaling.Factor != 32 {
		t.Error("Shape shares its RopeScaling with callers")
	}
}
