package synth

import (
	"fmt"
	"strings"

	"kiln/gguf"
)

// Vocab is the tokenizer of a synthetic model: the tokenizer.* metadata
// written into it, and its number of tokens (the rows of token_embd).
type Vocab struct {
	KV     []gguf.KV // tokenizer.* keys, in the order they are written
	Size   int       // len(tokenizer.ggml.tokens)
	Source string    // where it came from, for the record ("synthetic", a path)
}

// llama.cpp's llama_token_type values (tokenizer.ggml.token_type).
const (
	tokenNormal  = 1
	tokenUnknown = 2
	tokenControl = 3
	tokenUnused  = 5
	tokenByte    = 6
)

const (
	keyTokens = "tokenizer.ggml.tokens"
	keyScores = "tokenizer.ggml.scores"
	keyTypes  = "tokenizer.ggml.token_type"
)

// VocabFromGGUF copies every tokenizer.* key of the GGUF file at path (a
// model or one of llama.cpp's vocab-only files).
func VocabFromGGUF(path string) (*Vocab, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("synth: vocabulary: %w", err)
	}
	defer f.Close()
	v := &Vocab{Source: path}
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			v.KV = append(v.KV, kv)
		}
	}
	tokens, ok := f.Strings(keyTokens)
	if !ok || len(tokens) == 0 {
		return nil, fmt.Errorf("synth: %s has no %s array: not a model or vocab file", path, keyTokens)
	}
	v.Size = len(tokens)
	if _, ok := f.String("tokenizer.ggml.model"); !ok {
		return nil, fmt.Errorf("synth: %s has no tokenizer.ggml.model", path)
	}
	return v, nil
}

// value returns the vocabulary's value for key.
func (v *Vocab) value(key string) (gguf.Value, bool) {
	for _, kv := range v.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return gguf.Value{}, false
}

// Padded returns v grown to n tokens the way convert_hf_to_gguf.py pads a
// vocabulary to the model's vocab_size: "[PAD<id>]" tokens of type UNUSED
// (score -1000 where the vocabulary has scores). n below v.Size is an error;
// n == v.Size returns v.
func (v *Vocab) Padded(n int) (*Vocab, error) {
	if n < v.Size {
		return nil, fmt.Errorf("synth: vocab size %d is smaller than the vocabulary's %d tokens", n, v.Size)
	}
	if n == v.Size {
		return v, nil
	}
	out := &Vocab{Size: n, Source: v.Source}
	for _, kv := range v.KV {
		val := kv.Value
		switch kv.Key {
		case keyTokens:
			toks, ok := val.Strings()
			if !ok {
				return nil, fmt.Errorf("synth: %s is not an array of strings", keyTokens)
			}
			for i := len(toks); i < n; i++ {
				toks = append(toks, fmt.Sprintf("[PAD%d]", i))
			}
			val = gguf.StringsValue(toks)
		case keyScores:
			sc, ok := val.Float32s()
			if !ok || len(sc) != v.Size {
				return nil, fmt.Errorf("synth: %s is not %d floats", keyScores, v.Size)
			}
			for len(sc) < n {
				sc = append(sc, -1000)
			}
			val = gguf.Float32sValue(sc)
		case keyTypes:
			ty, ok := val.Int32s()
			if !ok || len(ty) != v.Size {
				return nil, fmt.Errorf("synth: %s is not %d integers", keyTypes, v.Size)
			}
			for len(ty) < n {
				ty = append(ty, tokenUnused)
			}
			val = gguf.Int32sValue(ty)
		}
		out.KV = append(out.KV, gguf.KV{Key: kv.Key, Value: val})
	}
	return out, nil
}

// MinSyntheticVocab is the smallest SyntheticVocab: <unk>, <s>, </s> and
// the 256 byte tokens.
const MinSyntheticVocab = 3 + 256

// SyntheticVocab builds a SentencePiece-style ("llama") vocabulary of n
// tokens that llama.cpp loads and can tokenize any text with, for models
// made without a real tokenizer:
//
//	0 <unk>, 1 <s> (BOS), 2 </s> (EOS)
//	3..258 <0x00>..<0xFF>              byte fallback
//	259..  "▁", the printable ASCII characters, then strings over
//	       "▁etaoinshrdlucmfwypvbgkjqxz" of length 2, 3, ... (▁ only first),
//	       scored so that earlier (shorter) pieces merge first.
func SyntheticVocab(n int) (*Vocab, error) {
	if n < MinSyntheticVocab || n > 1<<24 {
		return nil, fmt.Errorf("synth: a synthetic vocabulary needs %d..%d tokens, not %d", MinSyntheticVocab, 1<<24, n)
	}
	tokens := make([]string, 0, n)
	types := make([]int32, 0, n)
	scores := make([]float32, 0, n)
	add := func(tok string, typ int32) {
		tokens = append(tokens, tok)
		types = append(types, typ)
		score := float32(0)
		if typ == tokenNormal {
			score = -float32(len(tokens))
		}
		scores = append(scores, score)
	}
	add("<unk>", tokenUnknown)
	add("<s>", tokenControl)
	add("</s>", tokenControl)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), tokenByte)
	}
	seen := map[string]bool{}
	piece := func(p string) {
		if len(tokens) < n && !seen[p] {
			seen[p] = true
			add(p, tokenNormal)
		}
	}
	piece("▁")
	for c := byte('!'); c <= '~'; c++ {
		piece(string(c))
	}
	alphabet := []string{"▁"}
	for _, c := range "etaoinshrdlucmfwypvbgkjqxz" {
		alphabet = append(alphabet, string(c))
	}
	// Enumerate strings of growing length in alphabet order; digits[i] is
	// the index of the i-th character.
	for length := 2; len(tokens) < n; length++ {
		digits := make([]int, length)
		for len(tokens) < n {
			var b strings.Builder
			ok := true
			for i, d := range digits {
				if d == 0 && i > 0 {
					ok = false // "▁" only at the start of a piece, as SentencePiece splits
					break
				}
				b.WriteString(alphabet[d])
			}
			if ok {
				piece(b.String())
			}
			i := length - 1
			for i >= 0 && digits[i] == len(alphabet)-1 {
				digits[i] = 0
				i--
			}
			if i < 0 {
				break
			}
			digits[i]++
		}
	}
	v := &Vocab{Size: n, Source: "synthetic"}
	kv := func(k string, val gguf.Value) { v.KV = append(v.KV, gguf.KV{Key: k, Value: val}) }
	kv("tokenizer.ggml.model", gguf.StringValue("llama"))
	kv("tokenizer.ggml.pre", gguf.StringValue("default"))
	kv(keyTokens, gguf.StringsValue(tokens))
	kv(keyScores, gguf.Float32sValue(scores))
	kv(keyTypes, gguf.Int32sValue(types))
	kv("tokenizer.ggml.bos_token_id", gguf.Uint32Value(1))
	kv("tokenizer.ggml.eos_token_id", gguf.Uint32Value(2))
	kv("tokenizer.ggml.unknown_token_id", gguf.Uint32Value(0))
	kv("tokenizer.ggml.add_bos_token", gguf.BoolValue(true))
	kv("tokenizer.ggml.add_eos_token", gguf.BoolValue(false))
	return v, nil
}
