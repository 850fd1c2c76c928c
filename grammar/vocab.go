package grammar

import (
	"fmt"
	"slices"

	"kiln/tokenizer"
)

// Vocabulary is a model's tokens as the bytes each adds to the generated
// text, with which tokens may appear inside constrained text at all and
// which end generation. It holds the byte trie token masks are computed
// with. Immutable and safe for concurrent use.
type Vocabulary struct {
	bytes [][]byte // [n] the token's bytes; nil for tokens never allowed inside text
	eog   []bool   // [n] ends generation: allowed exactly where the grammar can end
	trie  trie
}

// Size returns the number of token ids.
func (v *Vocabulary) Size() int { return len(v.bytes) }

// TokenBytes returns the bytes token id adds to the text (nil for a token
// that is never allowed inside text: control, unknown, unused tokens, and
// end-of-generation tokens).
func (v *Vocabulary) TokenBytes(id int32) []byte { return v.bytes[id] }

// MaxTokenBytes returns the most bytes one token adds to the text.
func (v *Vocabulary) MaxTokenBytes() int { return v.trie.maxDepth }

// IsEOG reports whether token id ends generation.
func (v *Vocabulary) IsEOG(id int32) bool { return v.eog[id] }

// NewVocabulary builds a vocabulary from each token's bytes: tokens[id] is
// nil (or empty) for a token that may never appear inside text; eog lists
// the end-of-generation ids (their bytes are ignored).
func NewVocabulary(tokens [][]byte, eog []int32) (*Vocabulary, error) {
	n := len(tokens)
	if n == 0 {
		return nil, fmt.Errorf("grammar: empty vocabulary")
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("grammar: vocabulary of %d tokens is too large", n)
	}
	v := &Vocabulary{bytes: make([][]byte, n), eog: make([]bool, n)}
	for _, id := range eog {
		if id < 0 || int(id) >= n {
			return nil, fmt.Errorf("grammar: end-of-generation id %d outside the vocabulary of %d", id, n)
		}
		v.eog[id] = true
	}
	for id, b := range tokens {
		if len(b) > 0 && !v.eog[id] {
			if len(b) > maxTokenBytes {
				return nil, fmt.Errorf("grammar: token %d has %d bytes (at most %d)", id, len(b), maxTokenBytes)
			}
			v.bytes[id] = slices.Clone(b)
		}
	}
	v.trie = buildTrie(v.bytes)
	return v, nil
}

// maxTokenBytes bounds a token's length (the trie walk keeps a stack as deep
// as the longest token).
const maxTokenBytes = 1 << 12

// VocabularyFromTokenizer takes the vocabulary of t: each token's bytes are
// its piece (tokenizer.Piece: raw bytes, SentencePiece "▁" as a space, byte
// tokens <0xAB> as their byte, byte-level BPE spelling decoded). Only
// normal and byte tokens may appear inside text; control, user-defined,
// unknown, unused and undefined tokens never do (a user-defined token such as
// Qwen's <tool_call> would confuse whatever parses the text later). The
// end-of-generation tokens are t.EOG().
func VocabularyFromTokenizer(t *tokenizer.Tokenizer) (*Vocabulary, error) {
	v := t.Vocab()
	tokens := make([][]byte, t.Size())
	for id := range int32(t.Size()) {
		switch v.Type(id) {
		case tokenizer.TypeNormal, tokenizer.TypeByte:
			tokens[id] = []byte(t.Piece(id))
		}
	}
	return NewVocabulary(tokens, t.EOG())
}
