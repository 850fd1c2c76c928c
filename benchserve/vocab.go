package benchserve

import (
	"fmt"

	"kiln/gguf"
)

// GGUFVocabSize returns the vocabulary size of a GGUF model or tokenizer
// file: the length of its tokenizer.ggml.tokens array.
func GGUFVocabSize(path string) (int, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	toks, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok {
		return 0, fmt.Errorf("%s: no tokenizer.ggml.tokens array (not a model or tokenizer GGUF?)", path)
	}
	return len(toks), nil
}
