package tokenizer

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"kiln/gguf"
)

// writeVocabGGUF returns a vocab-only GGUF image holding v's Metadata and
// the hyperparameters llama.cpp's loader insists on (a "llama" architecture).
func writeVocabGGUF(t testing.TB, name string, v *Vocab) []byte {
	t.Helper()
	w := gguf.NewWriter()
	w.Add("general.architecture", gguf.StringValue("llama"))
	w.Add("general.name", gguf.StringValue(name))
	for _, kv := range []struct {
		k string
		v uint32
	}{{"llama.block_count", 1}, {"llama.context_length", 4096}, {"llama.embedding_length", 64},
		{"llama.feed_forward_length", 128}, {"llama.attention.head_count", 1}, {"llama.attention.head_count_kv", 1},
		{"llama.rope.dimension_count", 64}, {"llama.vocab_size", uint32(len(v.Tokens))}} {
		w.Add(kv.k, gguf.Uint32Value(kv.v))
	}
	w.Add("llama.attention.layer_norm_rms_epsilon", gguf.Float32Value(1e-5))
	for _, kv := range v.Metadata() {
		w.Add(kv.Key, kv.Value)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fileVocabs are the vocabularies built from tokenizer files whose GGUF
// llama.cpp has checked (testdata/oracle).
func fileVocabs(t testing.TB) map[string]*Vocab {
	t.Helper()
	q25 := memoize(t, "qwen25Vocab", func() *Vocab { return loadQwen2Vocab(t, FamilyQwen25) })
	sp := memoize(t, "llama2ModelVocab", func() *Vocab {
		v, err := LoadSentencePiece(sharedTokenizerFile(t, "llama2-spm.model"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	})
	return map[string]*Vocab{"llama-bpe": llama3Vocab(t), "qwen2": qwen2Vocab(t), "qwen2.5": q25, "llama2-model": sp}
}

// TestWriteVocabGGUF writes fileVocabs as GGUF files into
// $KILN_TOKENIZER_WRITE_GGUF for testdata/oracle/gen.sh (skipped otherwise).
func TestWriteVocabGGUF(t *testing.T) {
	dir := os.Getenv("KILN_TOKENIZER_WRITE_GGUF")
	if dir == "" {
		t.Skip("set KILN_TOKENIZER_WRITE_GGUF=dir to write the file-built vocabs as GGUF")
	}
	for name, v := range fileVocabs(t) {
		if err := os.WriteFile(filepath.Join(dir, name+".gguf"), writeVocabGGUF(t, name, v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMetadataRoundTrip checks that Metadata written to a GGUF reads back
// as the same vocabulary.
func TestMetadataRoundTrip(t *testing.T) {
	cases := map[string]*Vocab{
		"stories260K": ggufVocab(t, "stories260K.gguf"),
		"phi-3":       ggufVocab(t, "llamacpp-vocab/ggml-vocab-phi-3.gguf"),
		"starcoder":   ggufVocab(t, "llamacpp-vocab/ggml-vocab-starcoder.gguf"),
		"qwen2":       qwen2Vocab(t),
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := gguf.Parse(writeVocabGGUF(t, v.Name, v))
			if err != nil {
				t.Fatal(err)
			}
			got, err := VocabFromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, v) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v", summary(got), summary(v))
			}
		})
	}
}

// summary is a short printable form of a Vocab for failure messages.
func summary(v *Vocab) Vocab {
	s := *v
	s.Tokens, s.Scores, s.Types, s.Merges = s.Tokens[:min(4, len(s.Tokens))], nil, nil, nil
	s.ChatTemplate = ""
	return s
}
