package synth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

func TestLoadVocabSources(t *testing.T) {
	models := testutil.SharedModels(t)
	tok := func(name string) string { return filepath.Join(models, "tokenizers", name) }
	tests := []struct {
		source string
		size   int
		model  string // tokenizer.ggml.model
		pre    string // tokenizer.ggml.pre ("" when absent)
		eos    uint64
		token  int // an id whose text is checked
		text   string
	}{
		{tok("tok512-spm.model"), 512, "llama", "default", 2, 1, "<s>"},
		{tok("llama2-spm.model"), 32000, "llama", "default", 2, 29871, "▁"},
		{tok("llama3-tiktoken.model"), 128256, "gpt2", "llama-bpe", 128001, 128009, "<|eot_id|>"},
		{tok("llama3.2-encoder.json"), 128256, "gpt2", "llama-bpe", 128001, 128000, "<|begin_of_text|>"},
		{tok("qwen2-vocab.json"), 151665, "gpt2", "qwen2", 151645, 151644, "<|im_start|>"},
		{tok("gpt2-encoder.json"), 50257, "gpt2", "gpt-2", 50256, 50256, "<|endoftext|>"},
		{tok("gpt2-encoder.json") + "," + tok("gpt2-vocab.bpe"), 50257, "gpt2", "gpt-2", 50256, 50256, "<|endoftext|>"},
		{filepath.Join(models, "llamacpp-vocab", "ggml-vocab-phi-3.gguf"), 32064, "llama", "default", 32000, 32007, "<|end|>"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.source), func(t *testing.T) {
			if testing.Short() && tt.size > 100000 {
				t.Skip("large vocabulary")
			}
			v, err := LoadVocab(tt.source)
			if err != nil {
				t.Fatal(err)
			}
			if v.Size != tt.size {
				t.Fatalf("size %d, want %d", v.Size, tt.size)
			}
			toks := v.mustTokens()
			model, _ := v.value("tokenizer.ggml.model")
			pre, _ := v.value("tokenizer.ggml.pre")
			eos, _ := v.value("tokenizer.ggml.eos_token_id")
			m, _ := model.String()
			p, _ := pre.String()
			e, _ := eos.Uint()
			if len(toks) != tt.size || m != tt.model || p != tt.pre || e != tt.eos || toks[tt.token] != tt.text {
				t.Errorf("%d tokens, model %q, pre %q, eos %d, token %d %q; want %d %q %q %d %q",
					len(toks), m, p, e, tt.token, toks[tt.token], tt.size, tt.model, tt.pre, tt.eos, tt.text)
			}
		})
	}
}

func TestLoadVocabErrors(t *testing.T) {
	dir := t.TempDir()
	lonely := filepath.Join(dir, "x-vocab.json")
	if err := os.WriteFile(lonely, []byte(`{"a": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.model")
	if err := os.WriteFile(junk, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	for source, want := range map[string]string{
		filepath.Join(dir, "vocab.txt"):  "cannot read a vocabulary",
		lonely:                           "no merges file",
		junk:                             "junk.model",
		filepath.Join(dir, "none.gguf"):  "none.gguf",
		filepath.Join(dir, "none.model"): "none.model",
	} {
		_, err := LoadVocab(source)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "synth: ") {
			t.Errorf("LoadVocab(%s) = %v, want a synth: error mentioning %q", filepath.Base(source), err, want)
		}
	}
}
