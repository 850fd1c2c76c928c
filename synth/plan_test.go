package synth

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"kiln/convert"
	"kiln/gguf"
)

var f32 = convert.Scheme{FileType: convert.FileTypeF32, Pure: true}

func kvMap(kvs []gguf.KV) map[string]gguf.Value {
	m := map[string]gguf.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestShapeDirectories plans every named shape (nothing is written) and
// checks parameter counts against the published model sizes, and the
// architecture-specific tensors and keys.
func TestShapeDirectories(t *testing.T) {
	tests := []struct {
		shape   string
		params  uint64 // weights, rope_freqs excluded: the published count
		tensors int
	}{
		{"stories15m", 24_407_712, 2 + 6*9 + 1},
		{"smollm2-135m", 134_515_008, 2 + 30*9},
		{"qwen2.5-0.5b", 494_032_768, 2 + 24*12},
		{"llama-3.2-1b", 1_235_814_400, 3 + 16*9},
		{"tinyllama-1.1b", 1_100_048_384, 3 + 22*9},
		{"qwen3-0.6b", 596_049_920, 2 + 28*11},
		{"qwen1.5-moe-a2.7b", 14_315_784_192, 3 + 24*17},
		{"olmoe-1b-7b", 6_919_161_856, 3 + 16*12},
		{"mixtral-8x7b", 46_702_792_704, 3 + 32*10}, // 46.7B as published
	}
	for _, tt := range tests {
		t.Run(tt.shape, func(t *testing.T) {
			s, _ := Shape(tt.shape)
			m, err := Plan(s, nil, f32, 1)
			if err != nil {
				t.Fatal(err)
			}
			var params uint64
			byName := map[string]*Tensor{}
			for i := range m.Tensors {
				ts := &m.Tensors[i]
				byName[ts.Name] = ts
				n := uint64(1)
				for _, d := range ts.Shape {
					n *= d
				}
				if ts.Name != "rope_freqs.weight" {
					params += n
				}
				if m.Types[i] != gguf.TypeF32 {
					t.Errorf("%s: type %s in an F32 model", ts.Name, m.Types[i])
				}
			}
			if params != tt.params {
				t.Errorf("parameters = %d, want %d", params, tt.params)
			}
			if len(m.Tensors) != tt.tensors {
				t.Errorf("%d tensors, want %d", len(m.Tensors), tt.tensors)
			}
			kv := kvMap(m.KV)
			arch, _ := kv["general.architecture"].String()
			if arch != s.Arch {
				t.Fatalf("general.architecture = %q, want %q", arch, s.Arch)
			}
			for key, want := range map[string]uint64{
				"block_count": uint64(s.Layers), "embedding_length": uint64(s.Dim),
				"feed_forward_length": uint64(s.FFN), "attention.head_count": uint64(s.Heads),
				"attention.head_count_kv": uint64(s.KVHeads), "context_length": uint64(s.Ctx),
			} {
				v, ok := kv[arch+"."+key]
				if got, _ := v.Uint(); !ok || v.Type() != gguf.TypeUint32 || got != want {
					t.Errorf("%s.%s = %v, want uint32 %d", arch, key, v, want)
				}
			}
			if eps, _ := kv[arch+".attention.layer_norm_rms_epsilon"].Float(); float32(eps) != float32(s.NormEps) {
				t.Errorf("rms epsilon = %v, want %v", eps, s.NormEps)
			}
			if theta, _ := kv[arch+".rope.freq_base"].Float(); float32(theta) != float32(s.RopeTheta) {
				t.Errorf("rope.freq_base = %v, want %v", theta, s.RopeTheta)
			}
			if ft, _ := kv["general.file_type"].Uint(); ft != 0 {
				t.Errorf("general.file_type = %d, want 0 (ALL_F32)", ft)
			}
			if toks, _ := kv["tokenizer.ggml.tokens"].Strings(); len(toks) != s.VocabSize {
				t.Errorf("%d tokens, want %d", len(toks), s.VocabSize)
			}
			_, hasOut := byName["output.weight"]
			if hasOut == s.Tied {
				t.Errorf("output.weight present = %v with tied = %v", hasOut, s.Tied)
			}
			hd := s.withDefaults().HeadDim
			q := byName["blk.0.attn_q.weight"]
			if q == nil || fmt.Sprint(q.Shape) != fmt.Sprint([]uint64{uint64(s.Dim), uint64(s.Heads * hd)}) {
				t.Errorf("attn_q shape %v", q)
			}
			k := byName[fmt.Sprintf("blk.%d.attn_k.weight", s.Layers-1)]
			if k == nil || fmt.Sprint(k.Shape) != fmt.Sprint([]uint64{uint64(s.Dim), uint64(s.withDefaults().KVHeads * hd)}) {
				t.Errorf("attn_k shape %v", k)
			}
			_, hasBias := byName["blk.0.attn_q.bias"]
			_, hasQKNorm := byName["blk.0.attn_k_norm.weight"]
			if hasBias != (arch == "qwen2" || arch == "qwen2moe") || hasQKNorm != (arch == "qwen3" || arch == "olmoe") {
				t.Errorf("bias %v, qk-norm %v for %s", hasBias, hasQKNorm, arch)
			}
			_, hasKeyLen := kv[arch+".attention.key_length"]
			if hasKeyLen != (arch == "qwen3") {
				t.Errorf("key_length present = %v", hasKeyLen)
			}
			_, hasRopeFreqs := byName["rope_freqs.weight"]
			if hasRopeFreqs != (s.RopeScaling != nil) {
				t.Errorf("rope_freqs present = %v", hasRopeFreqs)
			}
			if arch == "llama" {
				if d, _ := kv["llama.rope.dimension_count"].Uint(); d != uint64(hd) {
					t.Errorf("rope.dimension_count = %d, want %d", d, hd)
				}
			}
		})
	}
}

// TestLlama3RopeFactors checks rope_freqs for Llama 3.2 1B against the
// formula in float64: 1 for i <= 14, 32 for i >= 18, smoothed between.
func TestLlama3RopeFactors(t *testing.T) {
	r := Llama3Rope{Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 8192}
	got := llama3RopeFactors(64, 500000, r)
	if len(got) != 32 {
		t.Fatalf("%d factors, want 32", len(got))
	}
	for i, g := range got {
		freq := math.Pow(500000, -float64(2*i)/64)
		wavelen := 2 * math.Pi / freq
		want := 1.0
		switch {
		case wavelen > 8192:
			want = 32
		case wavelen >= 2048:
			smooth := (8192/wavelen - 1) / 3
			want = 1 / ((1-smooth)/32 + smooth)
		}
		if math.Abs(float64(g)-want) > 1e-5*want {
			t.Errorf("factor[%d] = %v, want %v", i, g, want)
		}
		if (i <= 14 && g != 1) || (i >= 18 && g != 32) || (i >= 15 && i <= 17 && (g <= 1 || g >= 32)) {
			t.Errorf("factor[%d] = %v is in the wrong band", i, g)
		}
	}
}

func TestPlanVocabSize(t *testing.T) {
	s := validLlama()
	v, err := SyntheticVocab(280)
	if err != nil {
		t.Fatal(err)
	}
	// VocabSize 0: the vocabulary's size.
	s.VocabSize = 0
	m, err := Plan(s, v, f32, 1)
	if err != nil || m.Spec.VocabSize != 280 {
		t.Fatalf("Plan: vocab %d, %v; want 280", m.Spec.VocabSize, err)
	}
	// Larger: padded with [PAD] tokens of type UNUSED.
	s.VocabSize = 300
	m, err = Plan(s, v, f32, 1)
	if err != nil {
		t.Fatal(err)
	}
	kv := kvMap(m.KV)
	toks, _ := kv["tokenizer.ggml.tokens"].Strings()
	types, _ := kv["tokenizer.ggml.token_type"].Int32s()
	scores, _ := kv["tokenizer.ggml.scores"].Float32s()
	if len(toks) != 300 || len(types) != 300 || len(scores) != 300 || toks[299] != "[PAD299]" || types[299] != tokenUnused || toks[279] != v.mustTokens()[279] {
		t.Fatalf("padding: %d tokens (last %q type %d), %d types, %d scores", len(toks), toks[len(toks)-1], types[len(types)-1], len(types), len(scores))
	}
	// Smaller: an error, not a silent truncation.
	s.VocabSize = 100
	if _, err := Plan(s, v, f32, 1); err == nil || !strings.Contains(err.Error(), "smaller than") {
		t.Fatalf("Plan with vocab size below the vocabulary: %v", err)
	}
	// Neither a vocabulary nor a size.
	s.VocabSize = 0
	if _, err := Plan(s, nil, f32, 1); err == nil {
		t.Fatal("Plan without vocabulary or size succeeded")
	}
}

func (v *Vocab) mustTokens() []string {
	val, _ := v.value(keyTokens)
	toks, _ := val.Strings()
	return toks
}

func TestSyntheticVocab(t *testing.T) {
	for _, n := range []int{MinSyntheticVocab, 512, 32000, 151936} {
		v, err := SyntheticVocab(n)
		if err != nil {
			t.Fatal(err)
		}
		toks := v.mustTokens()
		if len(toks) != n || v.Size != n {
			t.Fatalf("SyntheticVocab(%d): %d tokens", n, len(toks))
		}
		seen := map[string]bool{}
		for i, tok := range toks {
			if seen[tok] {
				t.Fatalf("SyntheticVocab(%d): token %d %q repeated", n, i, tok)
			}
			seen[tok] = true
			if i > 0 && strings.Contains(tok[1:], "▁") && !strings.HasPrefix(tok, "▁") {
				t.Fatalf("token %q has ▁ inside", tok)
			}
		}
	}
	if _, err := SyntheticVocab(MinSyntheticVocab - 1); err == nil {
		t.Error("SyntheticVocab accepted fewer tokens than the byte fallback needs")
	}
}

// TestResidualScale: Spec.ResidualScale scales the spread of the output
// projections alone (the other tensors, and a same-seed model with fewer
// layers, keep their distributions), and bad scales are refused.
func TestResidualScale(t *testing.T) {
	s := Spec{Arch: "llama", Dim: 64, Layers: 2, Heads: 4, FFN: 128, VocabSize: 300}
	base, err := s.Tensors()
	if err != nil {
		t.Fatal(err)
	}
	s.ResidualScale = 0.25
	scaled, err := s.Tensors()
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range base {
		c := scaled[i]
		want := b.Std
		if strings.HasSuffix(b.Name, "attn_output.weight") || strings.HasSuffix(b.Name, "ffn_down.weight") {
			want *= 0.25
		}
		if c.Name != b.Name || c.Std != want || c.Mean != b.Mean {
			t.Errorf("%s: std %v mean %v, want %v %v", c.Name, c.Std, c.Mean, want, b.Mean)
		}
	}
	for _, bad := range []float64{-1, math.NaN(), 1e9} {
		s.ResidualScale = bad
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "residual-scale") {
			t.Errorf("residual scale %v: %v", bad, err)
		}
	}
}
