package synth

import (
	"fmt"
	"path/filepath"
	"strings"
)

// LoadVocab reads a vocabulary from source, chosen by its name:
//
//	*.gguf                 every tokenizer.* key of a model or vocab-only GGUF
func LoadVocab(source string) (*Vocab, error) {
	switch strings.ToLower(filepath.Ext(source)) {
	case ".gguf":
		return VocabFromGGUF(source)
	}
	return nil, fmt.Errorf("synth: cannot read a vocabulary from %q (want a .gguf file)", source)
}
