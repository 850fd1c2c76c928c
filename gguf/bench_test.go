package gguf_test

import (
	"os"
	"path/filepath"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
)

// BenchmarkOpen maps and parses vocab-only GGUFs: the cost is the metadata
// (token strings, scores, merges), which is what a model load pays before
// touching any weight.
func BenchmarkOpen(b *testing.B) {
	for _, name := range []string{"llama-spm", "deepseek-llm"} {
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(testutil.SharedModels(b), "llamacpp-vocab", "ggml-vocab-"+name+".gguf")
			testutil.NeedData(b, path)
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				f, err := gguf.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
