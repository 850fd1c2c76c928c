package tokenizer

import (
	"fmt"

	"kiln/gguf"
)

// VocabFromGGUF reads the vocabulary of a GGUF file (see VocabFromMeta).
func VocabFromGGUF(f *gguf.File) (*Vocab, error) {
	return VocabFromMeta(f)
}

// FromGGUF builds the tokenizer of a GGUF file.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := VocabFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(v)
}

// MetaReader is the part of a GGUF metadata reader the tokenizer uses; each
// method returns the value of key and whether it is present with that type.
// *gguf.File satisfies it; tests use fakes.
type MetaReader interface {
	String(key string) (string, bool)
	Strings(key string) ([]string, bool)
	Float32s(key string) ([]float32, bool)
	Int32s(key string) ([]int32, bool)
	Uint(key string) (uint64, bool)
	Bool(key string) (bool, bool)
}

// GGUF metadata keys.
const (
	keyPrefix       = "tokenizer.ggml."
	keyModel        = keyPrefix + "model"
	keyPre          = keyPrefix + "pre"
	keyTokens       = keyPrefix + "tokens"
	keyScores       = keyPrefix + "scores"
	keyTokenType    = keyPrefix + "token_type"
	keyMerges       = keyPrefix + "merges"
	keyAddBOS       = keyPrefix + "add_bos_token"
	keyAddEOS       = keyPrefix + "add_eos_token"
	keyAddPrefix    = keyPrefix + "add_space_prefix"
	keyChatTemplate = "tokenizer.chat_template"
	keyName         = "general.name"
)

// VocabFromMeta reads a vocabulary from GGUF metadata the way llama.cpp's
// llama_vocab::impl::load does: per-model defaults for special ids and
// flags (SPM: BOS 1, EOS 2, UNK 0, add BOS, dummy-prefix space; BPE: BOS and
// EOS 11, flags by pre-tokenizer), then the file's values where present and
// in range, then EOT/EOM/FIM ids found by token text where not named.
func VocabFromMeta(m MetaReader) (*Vocab, error) {
	model, ok := m.String(keyModel)
	if !ok {
		return nil, fmt.Errorf("tokenizer: %s missing", keyModel)
	}
	if model != ModelSPM && model != ModelBPE {
		return nil, fmt.Errorf("tokenizer: unsupported tokenizer model %q (kiln reads %q and %q)", model, ModelSPM, ModelBPE)
	}
	v := NewVocab(model)
	v.Pre, _ = m.String(keyPre)
	v.Name, _ = m.String(keyName)
	v.ChatTemplate, _ = m.String(keyChatTemplate)

	if v.Tokens, ok = m.Strings(keyTokens); !ok {
		return nil, fmt.Errorf("tokenizer: %s missing or not a string array", keyTokens)
	}
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("tokenizer: %s is empty", keyTokens)
	}
	if s, ok := m.Float32s(keyScores); ok {
		v.Scores = s
	} else if s, ok := m.Int32s(keyScores); ok {
		v.Scores = make([]float32, len(s))
		for i, x := range s {
			v.Scores[i] = float32(x)
		}
	}
	if v.Scores != nil && len(v.Scores) < n {
		return nil, fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), n)
	}
	if t, ok := m.Int32s(keyTokenType); ok {
		if len(t) < n {
			return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(t), n)
		}
		v.Types = make([]TokenType, n)
		for i := range v.Types {
			v.Types[i] = TokenType(t[i])
		}
	}
	if v.Scores != nil {
		v.Scores = v.Scores[:n]
	}

	addBOS := false
	switch model {
	case ModelSPM:
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		addBOS = true
		v.AddSpacePrefix = true
	case ModelBPE:
		if v.Merges, ok = m.Strings(keyMerges); !ok {
			return nil, fmt.Errorf("tokenizer: %s missing or not a string array", keyMerges)
		}
		pre, err := lookupPre(v.Pre)
		if err != nil {
			return nil, err
		}
		v.BOS, v.EOS = 11, 11
		if pre.noBOS {
			v.BOS = -1
		}
		addBOS = pre.addBOS
		v.AddSpacePrefix = false
	}
	if b, ok := m.Bool(keyAddPrefix); ok {
		v.AddSpacePrefix = b
	}
	// Defaults out of range are dropped; file ids out of range are ignored.
	for _, s := range v.specialIDs() {
		if *s.id >= int32(n) {
			*s.id = -1
		}
		if id, ok := m.Uint(keyPrefix + s.key); ok && id < uint64(n) {
			*s.id = int32(id)
		}
	}
	// Deprecated FIM keys (read after the current ones, as llama.cpp does).
	for _, d := range []struct {
		key string
		id  *int32
	}{{"prefix_token_id", &v.FIMPre}, {"suffix_token_id", &v.FIMSuf}, {"middle_token_id", &v.FIMMid}} {
		if id, ok := m.Uint(keyPrefix + d.key); ok && id < uint64(n) {
			*d.id = int32(id)
		}
	}
	v.AddBOS = addBOS
	if b, ok := m.Bool(keyAddBOS); ok {
		v.AddBOS = b
	}
	if b, ok := m.Bool(keyAddEOS); ok {
		v.AddEOS = b
	}
	ids, err := v.textIndex()
	if err != nil {
		return nil, err
	}
	v.resolveSpecials(ids)
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v, nil
}

// Metadata returns the tokenizer.ggml.* keys (and tokenizer.chat_template)
// that describe v in a GGUF file, in the order llama.cpp's model saver
// writes them, so that a file written with them loads in llama.cpp with the
// same vocabulary. Special ids that are -1 are left out (llama.cpp then
// applies its per-model default); general.name is the model writer's to set.
//
// A ModelHFBPE vocab is written as AsSPM converts it (llama.cpp has no such
// model); when AsSPM refuses it, as is, which only kiln's tokenizer.json
// path knows (VocabFromMeta refuses it).
func (v *Vocab) Metadata() []gguf.KV {
	if v.Model == ModelHFBPE {
		if s, err := v.AsSPM(); err == nil {
			v = s
		}
	}
	kv := []gguf.KV{
		{Key: keyModel, Value: gguf.StringValue(v.Model)},
	}
	if v.Pre != "" {
		kv = append(kv, gguf.KV{Key: keyPre, Value: gguf.StringValue(v.Pre)})
	}
	kv = append(kv, gguf.KV{Key: keyTokens, Value: gguf.StringsValue(v.Tokens)})
	if v.Types != nil {
		t := make([]int32, len(v.Types))
		for i, x := range v.Types {
			t[i] = int32(x)
		}
		kv = append(kv, gguf.KV{Key: keyTokenType, Value: gguf.Int32sValue(t)})
	}
	if v.Scores != nil {
		kv = append(kv, gguf.KV{Key: keyScores, Value: gguf.Float32sValue(v.Scores)})
	}
	if v.Model == ModelBPE {
		kv = append(kv, gguf.KV{Key: keyMerges, Value: gguf.StringsValue(v.Merges)})
	}
	for _, s := range v.specialIDs() {
		if *s.id >= 0 {
			kv = append(kv, gguf.KV{Key: keyPrefix + s.key, Value: gguf.Uint32Value(uint32(*s.id))})
		}
	}
	kv = append(kv,
		gguf.KV{Key: keyAddBOS, Value: gguf.BoolValue(v.AddBOS)},
		gguf.KV{Key: keyAddEOS, Value: gguf.BoolValue(v.AddEOS)},
		gguf.KV{Key: keyAddPrefix, Value: gguf.BoolValue(v.AddSpacePrefix)},
	)
	if v.ChatTemplate != "" {
		kv = append(kv, gguf.KV{Key: keyChatTemplate, Value: gguf.StringValue(v.ChatTemplate)})
	}
	return kv
}
