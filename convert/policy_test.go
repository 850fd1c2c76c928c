package convert

import (
	"fmt"
	"strings"
	"testing"

	"kiln/gguf"
)

// llamaTensors is the directory of a dense llama-style model, in the
// converter's order (blocks in numeric order, 10 after 9).
func llamaTensors(layers, dim, ffn int, tied bool) []gguf.TensorInfo {
	d, f := uint64(dim), uint64(ffn)
	ts := []gguf.TensorInfo{{Name: "token_embd.weight", Shape: []uint64{d, 1000}}}
	for l := 0; l < layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			gguf.TensorInfo{Name: p + "attn_norm.weight", Shape: []uint64{d}},
			gguf.TensorInfo{Name: p + "attn_q.weight", Shape: []uint64{d, d}},
			gguf.TensorInfo{Name: p + "attn_k.weight", Shape: []uint64{d, d / 4}},
			gguf.TensorInfo{Name: p + "attn_v.weight", Shape: []uint64{d, d / 4}},
			gguf.TensorInfo{Name: p + "attn_output.weight", Shape: []uint64{d, d}},
			gguf.TensorInfo{Name: p + "ffn_norm.weight", Shape: []uint64{d}},
			gguf.TensorInfo{Name: p + "ffn_gate.weight", Shape: []uint64{d, f}},
			gguf.TensorInfo{Name: p + "ffn_up.weight", Shape: []uint64{d, f}},
			gguf.TensorInfo{Name: p + "ffn_down.weight", Shape: []uint64{f, d}},
		)
	}
	ts = append(ts, gguf.TensorInfo{Name: "output_norm.weight", Shape: []uint64{d}})
	if !tied {
		ts = append(ts, gguf.TensorInfo{Name: "output.weight", Shape: []uint64{d, 1000}})
	}
	for i := range ts {
		ts[i].Type = gguf.TypeF32
	}
	return ts
}

// layersWith lists the layers whose tensor `suffix` got type want.
func layersWith(ts []gguf.TensorInfo, types []gguf.Type, suffix string, want gguf.Type) string {
	var ls []string
	for i, t := range ts {
		if strings.HasSuffix(t.Name, suffix) && types[i] == want {
			ls = append(ls, fmt.Sprint(layerOf(t.Name)))
		}
	}
	return strings.Join(ls, ",")
}

func typeOf(ts []gguf.TensorInfo, types []gguf.Type, name string) gguf.Type {
	for i, t := range ts {
		if t.Name == name {
			return types[i]
		}
	}
	return 1 << 20
}

func TestChooseTypesMixes(t *testing.T) {
	tests := []struct {
		name       string
		ft         FileType
		pure, tied bool
		layers     int
		cols       int // dim and ffn
		want       map[string]gguf.Type
		attnV6     string // layers whose attn_v is Q6_K
		down6      string // layers whose ffn_down is Q6_K
		attnV5     string // layers whose attn_v is Q5_K
		down5      string
	}{
		{name: "Q4_K_M 22 layers (TinyLlama)", ft: FileTypeQ4_KM, layers: 22, cols: 256,
			want:   map[string]gguf.Type{"token_embd.weight": gguf.TypeQ4_K, "output.weight": gguf.TypeQ6_K, "blk.0.attn_q.weight": gguf.TypeQ4_K, "blk.5.attn_norm.weight": gguf.TypeF32, "blk.3.ffn_gate.weight": gguf.TypeQ4_K},
			attnV6: "0,1,4,7,10,13,16,19,20,21", down6: "0,1,4,7,10,13,16,19,20,21"},
		{name: "Q4_K_M tied: token_embd is the output", ft: FileTypeQ4_KM, tied: true, layers: 8, cols: 256,
			want:   map[string]gguf.Type{"token_embd.weight": gguf.TypeQ6_K},
			attnV6: "0,3,6,7", down6: "0,3,6,7"},
		{name: "Q5_K_M", ft: FileTypeQ5_KM, layers: 8, cols: 256,
			want:   map[string]gguf.Type{"blk.1.attn_v.weight": gguf.TypeQ5_K, "output.weight": gguf.TypeQ6_K},
			attnV6: "0,3,6,7", down6: "0,3,6,7", attnV5: "1,2,4,5", down5: "1,2,4,5"},
		{name: "Q4_K_S", ft: FileTypeQ4_KS, layers: 16, cols: 256,
			want:   map[string]gguf.Type{"blk.4.attn_v.weight": gguf.TypeQ4_K, "blk.2.ffn_down.weight": gguf.TypeQ4_K},
			attnV5: "0,1,2,3", down5: "0,1"},
		{name: "Q4_0: output Q6_K, the rest Q4_0", ft: FileTypeQ4_0, layers: 4, cols: 256,
			want: map[string]gguf.Type{"output.weight": gguf.TypeQ6_K, "token_embd.weight": gguf.TypeQ4_0, "blk.0.attn_v.weight": gguf.TypeQ4_0, "blk.0.ffn_down.weight": gguf.TypeQ4_0}},
		{name: "Q4_0 output with 288 columns: Q8_0", ft: FileTypeQ4_0, layers: 2, cols: 288,
			want: map[string]gguf.Type{"output.weight": gguf.TypeQ8_0, "blk.0.attn_q.weight": gguf.TypeQ4_0}},
		{name: "Q8_0: output stays Q8_0", ft: FileTypeQ8_0, layers: 2, cols: 64,
			want: map[string]gguf.Type{"output.weight": gguf.TypeQ8_0, "token_embd.weight": gguf.TypeQ8_0}},
		{name: "pure Q4_K", ft: FileTypeQ4_KM, pure: true, layers: 8, cols: 256,
			want: map[string]gguf.Type{"output.weight": gguf.TypeQ4_K, "blk.0.attn_v.weight": gguf.TypeQ4_K, "blk.0.ffn_down.weight": gguf.TypeQ4_K}},
		{name: "pure Q4_K, 288 columns: Q5_0 fallback", ft: FileTypeQ4_KM, pure: true, layers: 2, cols: 288,
			want: map[string]gguf.Type{"output.weight": gguf.TypeQ5_0, "blk.0.attn_q.weight": gguf.TypeQ5_0}},
		{name: "pure Q6_K, 288 columns: Q8_0 fallback", ft: FileTypeQ6_K, pure: true, layers: 2, cols: 288,
			want: map[string]gguf.Type{"blk.0.ffn_up.weight": gguf.TypeQ8_0}},
		{name: "pure Q5_K, 96 columns: Q5_1 fallback", ft: FileTypeQ5_KM, pure: true, layers: 2, cols: 96,
			want: map[string]gguf.Type{"blk.0.ffn_up.weight": gguf.TypeQ5_1}},
		{name: "Q4_K_M, 48 columns: Q5_0 cannot either, F16", ft: FileTypeQ4_KM, pure: true, layers: 2, cols: 48,
			want: map[string]gguf.Type{"blk.0.ffn_up.weight": gguf.TypeF16}},
		{name: "F16 file: matrices F16, norms F32", ft: FileTypeF16, layers: 2, cols: 100,
			want: map[string]gguf.Type{"output.weight": gguf.TypeF16, "blk.1.ffn_down.weight": gguf.TypeF16, "output_norm.weight": gguf.TypeF32}},
		{name: "BF16 file", ft: FileTypeBF16, layers: 2, cols: 64,
			want: map[string]gguf.Type{"token_embd.weight": gguf.TypeBF16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := llamaTensors(tt.layers, tt.cols, tt.cols, tt.tied)
			m := ModelInfo{Arch: "llama", Layers: tt.layers, Heads: 8, KVHeads: 2}
			types, err := ChooseTypes(m, ts, Scheme{FileType: tt.ft, Pure: tt.pure})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.want {
				if got := typeOf(ts, types, name); got != want {
					t.Errorf("%s: %s, want %s", name, got, want)
				}
			}
			for _, c := range []struct {
				suffix string
				typ    gguf.Type
				want   string
			}{{"attn_v.weight", gguf.TypeQ6_K, tt.attnV6}, {"ffn_down.weight", gguf.TypeQ6_K, tt.down6},
				{"attn_v.weight", gguf.TypeQ5_K, tt.attnV5}, {"ffn_down.weight", gguf.TypeQ5_K, tt.down5}} {
				if got := layersWith(ts, types, c.suffix, c.typ); got != c.want {
					t.Errorf("%s as %s in layers [%s], want [%s]", c.suffix, c.typ, got, c.want)
				}
			}
		})
	}
}

func TestChooseTypesErrors(t *testing.T) {
	ts := llamaTensors(2, 100, 100, false)
	_, err := ChooseTypes(ModelInfo{Arch: "llama", Layers: 2}, ts, Scheme{FileType: FileTypeQ4_0})
	if err == nil || !strings.Contains(err.Error(), "defines no fallback") {
		t.Errorf("Q4_0 with 100 columns: %v", err)
	}
	if _, err := ChooseTypes(ModelInfo{}, ts, Scheme{FileType: 99}); err == nil {
		t.Error("unknown file type accepted")
	}
}

func TestLlamaOrder(t *testing.T) {
	names := []string{"output.weight", "blk.10.attn_q.weight", "blk.2.ffn_up.weight", "token_embd.weight", "blk.2.attn_k.weight", "blk.x.foo", "output_norm.weight"}
	var got []string
	for _, i := range LlamaOrder(names) {
		got = append(got, names[i])
	}
	want := "blk.x.foo output.weight output_norm.weight token_embd.weight blk.2.attn_k.weight blk.2.ffn_up.weight blk.10.attn_q.weight"
	if strings.Join(got, " ") != want {
		t.Errorf("order\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestQuantizable(t *testing.T) {
	tests := []struct {
		name  string
		shape []uint64
		want  bool
	}{
		{"blk.0.attn_q.weight", []uint64{64, 64}, true},
		{"blk.0.attn_norm.weight", []uint64{64}, false},
		{"blk.0.attn_q_norm.weight", []uint64{64, 1}, false},
		{"blk.0.attn_q.bias", []uint64{64, 64}, false},
		{"blk.0.ffn_gate_inp.weight", []uint64{64, 8}, false},
		{"blk.0.attn_q.weight", []uint64{64, 1}, false}, // ggml_n_dims ignores trailing 1s
		{"rope_freqs.weight", []uint64{32}, false},
		{"position_embd.weight", []uint64{64, 64}, false},
		{"token_embd.weight", []uint64{64, 64}, true},
	}
	for _, tt := range tests {
		if got := Quantizable(tt.name, tt.shape); got != tt.want {
			t.Errorf("Quantizable(%s, %v) = %v, want %v", tt.name, tt.shape, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		ft   FileType
		pure bool // ParseScheme
	}{
		{"Q8_0", FileTypeQ8_0, true}, {"q4_k_m", FileTypeQ4_KM, false}, {"Q4_K", FileTypeQ4_KM, true},
		{"Q5_K", FileTypeQ5_KM, true}, {"F16", FileTypeF16, true}, {"bf16", FileTypeBF16, true},
		{"Q4_K_S", FileTypeQ4_KS, false}, {"Q6_K", FileTypeQ6_K, true}, {"F32", FileTypeF32, true},
	}
	for _, tt := range tests {
		ft, err := ParseFileType(tt.in)
		if err != nil || ft != tt.ft {
			t.Errorf("ParseFileType(%q) = %s, %v; want %s", tt.in, ft, err, tt.ft)
		}
		s, err := ParseScheme(tt.in)
		if err != nil || s.FileType != tt.ft || s.Pure != tt.pure {
			t.Errorf("ParseScheme(%q) = %v, %v; want %s pure %v", tt.in, s, err, tt.ft, tt.pure)
		}
	}
	for _, bad := range []string{"", "Q4", "IQ2_XXS", "Q8_K", "f64"} {
		if _, err := ParseScheme(bad); err == nil || !strings.HasPrefix(err.Error(), "convert: ") {
			t.Errorf("ParseScheme(%q) = %v, want a convert: error", bad, err)
		}
	}
}
