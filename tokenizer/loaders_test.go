package tokenizer

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
)

func sharedTokenizerFile(t testing.TB, name string) string {
	return testutil.SharedModel(t, filepath.Join("tokenizers", name))
}

func ggufVocab(t testing.TB, rel string) *Vocab {
	t.Helper()
	f, err := gguf.Open(testutil.SharedModel(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := VocabFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// memo caches values shared by tests (large vocabs take a while to load);
// the cached vocabs and tokenizers must not be modified.
var memo sync.Map

func memoize[T any](t testing.TB, key string, build func() T) T {
	t.Helper()
	if v, ok := memo.Load(key); ok {
		return v.(T)
	}
	v := build()
	if t.Failed() || t.Skipped() {
		return v
	}
	memo.Store(key, v)
	return v
}

// llama3Vocab is Llama 3.2's vocabulary from encoder.json + vocab.bpe with
// pre-tokenizer llama-bpe and Llama 3 specials (shared: do not modify).
func llama3Vocab(t testing.TB) *Vocab {
	t.Helper()
	return memoize(t, "llama3Vocab", func() *Vocab { return loadLlama3Vocab(t) })
}

func loadLlama3Vocab(t testing.TB) *Vocab {
	v, err := LoadGPT2(sharedTokenizerFile(t, "llama3.2-encoder.json"), sharedTokenizerFile(t, "llama3.2-vocab.bpe"))
	if err != nil {
		t.Fatal(err)
	}
	v.Pre = "llama-bpe"
	if err := v.AddSpecials(FamilyLlama3); err != nil {
		t.Fatal(err)
	}
	return v
}

// qwen2Vocab is Qwen2's vocabulary from vocab.json + merges.txt with
// pre-tokenizer qwen2 and Qwen2 specials (shared: do not modify).
func qwen2Vocab(t testing.TB) *Vocab {
	t.Helper()
	return memoize(t, "qwen2Vocab", func() *Vocab { return loadQwen2Vocab(t, FamilyQwen2) })
}

func loadQwen2Vocab(t testing.TB, family string) *Vocab {
	v, err := LoadGPT2(sharedTokenizerFile(t, "qwen2-vocab.json"), sharedTokenizerFile(t, "qwen2-merges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	v.Pre = "qwen2"
	if err := v.AddSpecials(family); err != nil {
		t.Fatal(err)
	}
	return v
}

func mustNew(t testing.TB, v *Vocab) *Tokenizer {
	t.Helper()
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestFileVocabVectors checks the llama.cpp vectors of vocabs whose GGUFs
// are too large for shared/models, built from their tokenizer files.
func TestFileVocabVectors(t *testing.T) {
	t.Run("llama-bpe", func(t *testing.T) {
		tok := memoize(t, "tok:llama-bpe", func() *Tokenizer { return mustNew(t, llama3Vocab(t)) })
		checkVectors(t, tok, readVectors(t, "ggml-vocab-llama-bpe"))
	})
	t.Run("qwen2", func(t *testing.T) {
		tok := memoize(t, "tok:qwen2", func() *Tokenizer { return mustNew(t, qwen2Vocab(t)) })
		checkVectors(t, tok, readVectors(t, "ggml-vocab-qwen2"))
	})
	t.Run("gpt-2", func(t *testing.T) {
		v, err := LoadGPT2(sharedTokenizerFile(t, "gpt2-encoder.json"), sharedTokenizerFile(t, "gpt2-vocab.bpe"))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.AddSpecials(FamilyGPT2); err != nil {
			t.Fatal(err)
		}
		checkVectors(t, mustNew(t, v), readVectors(t, "ggml-vocab-gpt-2"))
	})
}

// TestTikTokenMatchesGPT2Files checks that the tiktoken loader recovers
// exactly the vocab and merges of the published encoder.json/vocab.bpe.
func TestTikTokenMatchesGPT2Files(t *testing.T) {
	tk, err := LoadTikToken(sharedTokenizerFile(t, "llama3-tiktoken.model"))
	if err != nil {
		t.Fatal(err)
	}
	js := llama3Vocab(t) // the same files, plus specials after the 128000 regular tokens
	if !slices.Equal(tk.Tokens, js.Tokens[:len(tk.Tokens)]) || len(js.Tokens) != len(tk.Tokens)+256 {
		t.Errorf("tokens differ (%d vs %d)", len(tk.Tokens), len(js.Tokens))
	}
	if len(tk.Merges) != len(js.Merges) {
		t.Errorf("%d merges recovered, files hold %d", len(tk.Merges), len(js.Merges))
	}
	for i := range min(len(tk.Merges), len(js.Merges)) {
		if tk.Merges[i] != js.Merges[i] {
			t.Fatalf("merge %d: recovered %q, file has %q", i, tk.Merges[i], js.Merges[i])
		}
	}
}

// TestSentencePieceMatchesGGUF checks the .model reader against the GGUF
// vocabs llama.cpp's converter made from the same models.
func TestSentencePieceMatchesGGUF(t *testing.T) {
	for _, c := range []struct{ model, gguf string }{
		{"tok512-spm.model", "stories260K.gguf"},
		{"llama2-spm.model", "llamacpp-vocab/ggml-vocab-llama-spm.gguf"},
	} {
		t.Run(c.model, func(t *testing.T) {
			sp, err := LoadSentencePiece(sharedTokenizerFile(t, c.model))
			if err != nil {
				t.Fatal(err)
			}
			g := ggufVocab(t, c.gguf)
			if !slices.Equal(sp.Tokens, g.Tokens) {
				t.Errorf("tokens differ")
			}
			if !slices.Equal(sp.Scores, g.Scores) {
				t.Errorf("scores differ")
			}
			if !slices.Equal(sp.Types, g.Types) {
				t.Errorf("types differ")
			}
			if sp.BOS != g.BOS || sp.EOS != g.EOS || sp.UNK != g.UNK || sp.AddSpacePrefix != g.AddSpacePrefix || sp.AddBOS != g.AddBOS {
				t.Errorf("specials: model BOS %d EOS %d UNK %d prefix %v addBOS %v; gguf %d %d %d %v %v",
					sp.BOS, sp.EOS, sp.UNK, sp.AddSpacePrefix, sp.AddBOS, g.BOS, g.EOS, g.UNK, g.AddSpacePrefix, g.AddBOS)
			}
		})
	}
}
