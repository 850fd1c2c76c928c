package tokenizer

import (
	"path/filepath"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// benchText is about 3 MB of mixed text: llama.cpp's test inputs (English,
// code-like runs, digits, Cyrillic, Khmer, CJK, emoji, whitespace runs)
// repeated.
func benchText(b *testing.B) string {
	b.Helper()
	inp := testutil.ReadData(b, filepath.Join(testutil.SharedModels(b), "llamacpp-vocab", "ggml-vocab-llama-spm.gguf.inp"))
	unit := strings.ReplaceAll(string(inp), "__ggml_vocab_test__", "")
	return strings.Repeat(unit, 3<<20/len(unit)+1)[:3<<20]
}

func benchTokenizer(b *testing.B, name string) *Tokenizer {
	switch name {
	case "llama3":
		return memoize(b, "tok:llama-bpe", func() *Tokenizer { return mustNew(b, llama3Vocab(b)) })
	case "qwen2":
		return memoize(b, "tok:qwen2", func() *Tokenizer { return mustNew(b, qwen2Vocab(b)) })
	}
	return ggufTokenizer(b, filepath.Join("llamacpp-vocab", "ggml-vocab-"+name+".gguf"))
}

// BenchmarkEncode tokenizes 3 MB of text (no special-token parsing); the
// target is well under a second per 3 MB.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, name := range []string{"llama-spm", "gpt-2", "llama3", "qwen2", "deepseek-llm"} {
		b.Run(name, func(b *testing.B) {
			tok := benchTokenizer(b, name)
			b.SetBytes(int64(len(text)))
			var n int
			for b.Loop() {
				n = len(tok.Encode(text, false))
			}
			b.ReportMetric(float64(n), "tokens")
		})
	}
}

// BenchmarkDecode detokenizes the tokens of 3 MB of text.
func BenchmarkDecode(b *testing.B) {
	text := benchText(b)
	for _, name := range []string{"llama-spm", "llama3"} {
		b.Run(name, func(b *testing.B) {
			tok := benchTokenizer(b, name)
			ids := tok.Encode(text, false)
			b.SetBytes(int64(len(text)))
			var buf []byte
			for b.Loop() {
				buf = tok.AppendDecode(buf[:0], ids)
			}
		})
	}
}

// BenchmarkNew builds a tokenizer from a loaded vocabulary (text index,
// merge tables, piece cache).
func BenchmarkNew(b *testing.B) {
	for _, c := range []struct {
		name string
		v    func() *Vocab
	}{
		{"llama-spm", func() *Vocab { return ggufTokenizer(b, "llamacpp-vocab/ggml-vocab-llama-spm.gguf").Vocab() }},
		{"llama3", func() *Vocab { return llama3Vocab(b) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			v := c.v()
			for b.Loop() {
				if _, err := New(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
