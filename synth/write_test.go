package synth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"kiln/convert"
	"kiln/gguf"
	"kiln/internal/testutil"
)

// small returns a tiny model of arch whose rows fit every block size.
func small(arch string) Spec {
	s := Spec{Arch: arch, Dim: 256, Layers: 2, Heads: 4, KVHeads: 2, FFN: 256, VocabSize: 300, Ctx: 128}
	if arch == "qwen3" || arch == "qwen3moe" {
		s.HeadDim = 32 // heads*headDim != dim, as in Qwen3
	}
	if arch == "qwen3moe" || arch == "qwen2moe" || arch == "olmoe" {
		s.Experts, s.ExpertsUsed, s.ExpertFFN = 4, 2, 256
	}
	if arch == "olmoe" {
		s.KVHeads = s.Heads // its k norm is dim long: no GQA
	}
	if arch == "llama" {
		s.RopeScaling = &Llama3Rope{Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 64}
	}
	return s
}

func render(t *testing.T, s Spec, v *Vocab, sc convert.Scheme, seed uint64) []byte {
	t.Helper()
	m, err := Plan(s, v, sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeterministic(t *testing.T) {
	s := small("qwen2")
	a := render(t, s, nil, f32, 7)
	b := render(t, s, nil, f32, 7)
	c := render(t, s, nil, f32, 8)
	if !bytes.Equal(a, b) {
		t.Fatal("same seed gave different bytes")
	}
	if bytes.Equal(a, c) {
		t.Fatal("different seeds gave the same bytes")
	}
	// A tensor depends on (seed, name) only: a model with more layers has
	// the same blk.0 and token_embd.
	s3 := s
	s3.Layers = 3
	fa, _ := gguf.Parse(a)
	fd, _ := gguf.Parse(render(t, s3, nil, f32, 7))
	for _, name := range []string{"token_embd.weight", "blk.0.attn_q.weight", "blk.1.ffn_down.weight"} {
		ta, _ := fa.Tensor(name)
		td, _ := fd.Tensor(name)
		if !bytes.Equal(fa.Data(ta), fd.Data(td)) {
			t.Errorf("%s changed when a layer was added", name)
		}
	}
}

// TestRoundTrip writes small models of each architecture and type, reads
// them back with package gguf and checks the directory, the types, and (for
// F32) that every value is the one its row stream gives.
func TestRoundTrip(t *testing.T) {
	types := map[string][]string{
		"llama":    {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K", "Q4_K_M"},
		"qwen2":    {"F32", "F16", "Q8_0", "Q4_K"},
		"qwen3":    {"F32", "BF16", "Q4_0", "Q6_K"},
		"qwen3moe": {"F32", "Q8_0", "Q4_K"},
		"qwen2moe": {"F32", "Q4_K"},
		"olmoe":    {"F32", "Q8_0"},
	}
	for _, arch := range Architectures {
		for _, typ := range types[arch] {
			t.Run(arch+"-"+typ, func(t *testing.T) {
				sc, err := convert.ParseScheme(typ)
				if err != nil {
					t.Fatal(err)
				}
				s := small(arch)
				m, err := Plan(s, nil, sc, 3)
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if _, err := m.WriteTo(&buf); err != nil {
					t.Fatal(err)
				}
				f, err := gguf.Parse(buf.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				if len(f.Tensors) != len(m.Tensors) {
					t.Fatalf("%d tensors read, %d planned", len(f.Tensors), len(m.Tensors))
				}
				for i, want := range m.Tensors {
					got := f.Tensors[i]
					wantType := m.Types[i]
					if len(want.Shape) == 1 {
						wantType = gguf.TypeF32 // norms and biases stay F32
					}
					if got.Name != want.Name || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || got.Type != wantType || m.Types[i] != wantType {
						t.Fatalf("tensor %d: read %s %v %s, want %s %v %s", i, got.Name, got.Shape, got.Type, want.Name, want.Shape, wantType)
					}
					if got.Type == gguf.TypeF32 {
						checkF32(t, &want, f.Data(&got), m.Seed)
					}
				}
				if ft, _ := f.Uint("general.file_type"); ft != uint64(sc.FileType) {
					t.Errorf("general.file_type = %d, want %d", ft, sc.FileType)
				}
			})
		}
	}
}

// checkF32 compares an F32 tensor's bytes with its row streams and its
// sample statistics with the planned distribution.
func checkF32(t *testing.T, ts *Tensor, data []byte, seed uint64) {
	t.Helper()
	ne0 := int(ts.Shape[0])
	row := make([]float32, ne0)
	key := tensorKey(seed, ts.Name)
	var sum, sq float64
	for r := 0; r < ts.Rows(); r++ {
		ts.fillRow(key, r, row)
		for c, want := range row {
			got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*(r*ne0+c):]))
			if got != want {
				t.Fatalf("%s[%d][%d] = %v, want %v", ts.Name, r, c, got, want)
			}
			sum += float64(got)
			sq += float64(got) * float64(got)
		}
	}
	if ts.Fixed != nil {
		return
	}
	n := float64(ts.Rows() * ne0)
	mean := sum / n
	std := math.Sqrt(sq/n - mean*mean)
	// Sample mean and std of n normals: within ~5 standard errors.
	if math.Abs(mean-ts.Mean) > 5*ts.Std/math.Sqrt(n) || math.Abs(std-ts.Std) > 5*ts.Std/math.Sqrt(n)+1e-9 {
		t.Errorf("%s: sample mean %.4f std %.4f, planned %.4f and %.4f", ts.Name, mean, std, ts.Mean, ts.Std)
	}
}

// TestVocabFromGGUF copies stories260K's vocabulary into a synthetic model.
func TestVocabFromGGUF(t *testing.T) {
	path := testutil.SharedModel(t, "stories260K.gguf")
	v, err := LoadVocab(path)
	if err != nil {
		t.Fatal(err)
	}
	if v.Size != 512 {
		t.Fatalf("vocab size %d, want 512", v.Size)
	}
	s := small("llama")
	s.VocabSize = 0
	data := render(t, s, v, f32, 1)
	f, err := gguf.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := 0
	for _, kv := range src.KV {
		if len(kv.Key) > 10 && kv.Key[:10] == "tokenizer." {
			n++
			got, ok := f.Value(kv.Key)
			if !ok || !got.Equal(kv.Value) {
				t.Errorf("%s not copied", kv.Key)
			}
		}
	}
	emb, _ := f.Tensor("token_embd.weight")
	if n < 5 || emb.Shape[1] != 512 {
		t.Fatalf("%d tokenizer keys, token_embd %v", n, emb.Shape)
	}
	if _, err := LoadVocab(testutil.SharedModel(t, "stories260K.greedy.txt")); err == nil {
		t.Error("LoadVocab accepted a text file")
	}
}
