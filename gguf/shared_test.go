package gguf_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
)

// Tests on the real files in ../shared/models (skipped when absent).

// checkLayout checks what every file written by llama.cpp / gguf-py must
// satisfy: tensors consecutive in directory order, each padded to the
// alignment, the data section ending at the end of the file, and Data
// returning exactly Size bytes.
func checkLayout(t *testing.T, path string, f *gguf.File) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.DataOffset%f.Alignment != 0 && len(f.Tensors) > 0 {
		t.Errorf("DataOffset %d not aligned to %d", f.DataOffset, f.Alignment)
	}
	next := uint64(0)
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if ti.Offset != next {
			t.Errorf("tensor %s at offset %d, want %d (consecutive)", ti.Name, ti.Offset, next)
		}
		want := ti.Elements() / uint64(ti.Type.BlockSize()) * uint64(ti.Type.BlockBytes())
		if ti.Size != want {
			t.Errorf("tensor %s: Size %d, want %d", ti.Name, ti.Size, want)
		}
		if got := len(f.Data(ti)); uint64(got) != ti.Size {
			t.Errorf("tensor %s: len(Data) %d, want %d", ti.Name, got, ti.Size)
		}
		if got, ok := f.Tensor(ti.Name); !ok || got != ti {
			t.Errorf("Tensor(%q) = %v, %v; want the directory entry", ti.Name, got, ok)
		}
		next += (ti.Size + f.Alignment - 1) / f.Alignment * f.Alignment
	}
	if end := f.DataOffset + next; end != uint64(st.Size()) {
		t.Errorf("data section ends at %d, file has %d bytes", end, st.Size())
	}
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func TestStories260K(t *testing.T) {
	path := testutil.SharedModel(t, "stories260K.gguf")
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Version != 3 || f.Alignment != 32 || len(f.KV) != 19 || len(f.Tensors) != 48 {
		t.Fatalf("version %d alignment %d, %d keys, %d tensors; want 3, 32, 19, 48", f.Version, f.Alignment, len(f.KV), len(f.Tensors))
	}
	if a := f.Architecture(); a != "llama" {
		t.Errorf("Architecture() = %q, want llama", a)
	}
	// The model card from shared/models/README.md.
	for key, want := range map[string]uint64{
		"llama.embedding_length":        64,
		"llama.block_count":             5,
		"llama.attention.head_count":    8,
		"llama.attention.head_count_kv": 4,
		"llama.feed_forward_length":     172,
		"tokenizer.ggml.bos_token_id":   1,
		"tokenizer.ggml.eos_token_id":   2,
		// 0xFFFFFFFF in a uint32: an "unset" id in llama.cpp's converter.
		"tokenizer.ggml.padding_token_id": math.MaxUint32,
	} {
		if got, ok := f.Uint(key); !ok || got != want {
			t.Errorf("Uint(%q) = %d, %v; want %d", key, got, ok, want)
		}
	}
	if eps, ok := f.Float("llama.attention.layer_norm_rms_epsilon"); !ok || float32(eps) != 1e-5 {
		t.Errorf("rms epsilon = %g, %v; want 1e-5", eps, ok)
	}
	toks, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(toks) != 512 {
		t.Fatalf("tokens: %d, %v; want 512", len(toks), ok)
	}
	// "Once upon a time" encodes to [1, 403, 407, 261, 378]; 261 is "▁a".
	// Byte tokens <0x00>..<0xFF> occupy ids 3..258.
	if toks[1] != "<s>" || toks[261] != "▁a" || toks[3] != "<0x00>" || toks[258] != "<0xFF>" {
		t.Errorf("tokens[1,261,3,258] = %q %q %q %q", toks[1], toks[261], toks[3], toks[258])
	}
	if scores, ok := f.Float32s("tokenizer.ggml.scores"); !ok || len(scores) != 512 {
		t.Errorf("scores: %d, %v", len(scores), ok)
	}
	if types, ok := f.Int32s("tokenizer.ggml.token_type"); !ok || len(types) != 512 || types[0] != 2 || types[1] != 3 || types[3] != 6 {
		t.Errorf("token_type: %d, %v", len(types), ok)
	}

	for _, tc := range []struct {
		name  string
		shape []uint64
	}{
		{"token_embd.weight", []uint64{64, 512}},
		{"output_norm.weight", []uint64{64}},
		{"blk.0.attn_k.weight", []uint64{64, 32}},
		{"blk.4.ffn_down.weight", []uint64{172, 64}},
	} {
		ti, ok := f.Tensor(tc.name)
		if !ok {
			t.Errorf("tensor %s missing", tc.name)
			continue
		}
		if ti.Type != gguf.TypeF32 || !equalShape(ti.Shape, tc.shape) {
			t.Errorf("tensor %s: %v %v, want F32 %v", tc.name, ti.Type, ti.Shape, tc.shape)
		}
	}
	checkLayout(t, path, f)

	// Trained weights: finite and not all zero.
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		var sumsq float64
		for _, x := range f32s(f.Data(ti)) {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("tensor %s holds %v", ti.Name, x)
			}
			sumsq += float64(x) * float64(x)
		}
		if sumsq == 0 {
			t.Errorf("tensor %s is all zeros", ti.Name)
		}
	}
	if _, ok := f.Tensor("no.such.tensor"); ok {
		t.Error("Tensor found a name that is not there")
	}
	if _, ok := f.Value("no.such.key"); ok {
		t.Error("Value found a key that is not there")
	}
}

func TestLlama2TinyRandom(t *testing.T) {
	path := testutil.SharedModel(t, "llama-2-tiny-random.gguf")
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Tensors) != 12 || f.Architecture() != "llama" {
		t.Fatalf("%d tensors, arch %q; want 12, llama", len(f.Tensors), f.Architecture())
	}
	if n, _ := f.Uint("llama.embedding_length"); n != 8 {
		t.Errorf("embedding_length %d, want 8", n)
	}
	if ft, _ := f.Uint("general.file_type"); ft != 1 {
		t.Errorf("file_type %d, want 1 (mostly F16)", ft)
	}
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	if len(toks) != 32000 || toks[2] != "</s>" {
		t.Errorf("tokens: %d", len(toks))
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || emb.Type != gguf.TypeF16 || !equalShape(emb.Shape, []uint64{8, 32000}) || emb.Size != 8*32000*2 {
		t.Fatalf("token_embd.weight = %+v", emb)
	}
	norm, _ := f.Tensor("blk.0.attn_norm.weight")
	if norm.Type != gguf.TypeF32 || !equalShape(norm.Shape, []uint64{8}) {
		t.Errorf("attn_norm = %+v", norm)
	}
	checkLayout(t, path, f)
}

func TestVocabFiles(t *testing.T) {
	dir := filepath.Join(testutil.SharedModels(t), "llamacpp-vocab")
	for _, tc := range []struct {
		file, arch, model string
		tokens, merges    int // merges 0: no merges key (SentencePiece, WordPiece)
	}{
		{"baichuan", "baichuan", "llama", 64000, 0},
		{"bert-bge", "bert", "bert", 30522, 0},
		{"deepseek-coder", "llama", "gpt2", 32256, 31757},
		{"deepseek-llm", "llama", "gpt2", 102400, 99757},
		{"falcon", "falcon", "gpt2", 65024, 64784},
		{"gpt-2", "gpt2", "gpt2", 50257, 50000},
		{"gpt-neox", "gptneox", "gpt2", 50432, 50009},
		{"llama-spm", "llama", "llama", 32000, 0},
		{"mpt", "mpt", "gpt2", 50432, 50009},
		{"phi-3", "phi3", "llama", 32064, 0},
		{"refact", "refact", "gpt2", 49216, 48891},
		{"starcoder", "starcoder2", "gpt2", 49152, 48872},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, "ggml-vocab-"+tc.file+".gguf")
			testutil.NeedData(t, path)
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if len(f.Tensors) != 0 {
				t.Errorf("%d tensors in a vocab-only file", len(f.Tensors))
			}
			if f.Architecture() != tc.arch {
				t.Errorf("arch %q, want %q", f.Architecture(), tc.arch)
			}
			if m, _ := f.String("tokenizer.ggml.model"); m != tc.model {
				t.Errorf("tokenizer model %q, want %q", m, tc.model)
			}
			toks, _ := f.Strings("tokenizer.ggml.tokens")
			types, _ := f.Int32s("tokenizer.ggml.token_type")
			if len(toks) != tc.tokens || len(types) != tc.tokens {
				t.Errorf("%d tokens, %d token types; want %d", len(toks), len(types), tc.tokens)
			}
			merges, ok := f.Strings("tokenizer.ggml.merges")
			if len(merges) != tc.merges || ok != (tc.merges > 0) {
				t.Errorf("%d merges (%v), want %d", len(merges), ok, tc.merges)
			}
			checkLayout(t, path, f)
		})
	}
}

func equalShape(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
