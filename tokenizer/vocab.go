package tokenizer

import "fmt"

// TokenType is a token's type as stored in tokenizer.ggml.token_type
// (llama.cpp's llama_token_type).
type TokenType int32

// Token types, with llama.cpp's values.
const (
	TypeUndefined   TokenType = 0
	TypeNormal      TokenType = 1
	TypeUnknown     TokenType = 2
	TypeControl     TokenType = 3 // <s>, <|im_end|>: recognised in text only when parsing specials
	TypeUserDefined TokenType = 4 // always recognised in text, even without parsing specials
	TypeUnused      TokenType = 5
	TypeByte        TokenType = 6 // SentencePiece byte fallback <0xNN>
)

func (t TokenType) String() string {
	switch t {
	case TypeUndefined:
		return "undefined"
	case TypeNormal:
		return "normal"
	case TypeUnknown:
		return "unknown"
	case TypeControl:
		return "control"
	case TypeUserDefined:
		return "user-defined"
	case TypeUnused:
		return "unused"
	case TypeByte:
		return "byte"
	}
	return fmt.Sprintf("TokenType(%d)", int32(t))
}

// Tokenizer models (tokenizer.ggml.model) this package implements.
const (
	ModelSPM = "llama" // SentencePiece: score-ordered merges over characters, byte fallback
	ModelBPE = "gpt2"  // byte-level BPE: pre-tokenizer split, rank-ordered merges

	// ModelHFBPE is the Hugging Face tokenizers library's BPE over
	// characters (tokenizer.json with normalizers or Metaspace instead of a
	// byte-level pre-tokenizer: Llama 2, Mistral, TinyStories): normalize
	// and pre-tokenize (Vocab.HF),
	// rank-ordered merges, byte fallback <0xNN>, else the unknown token.
	// llama.cpp has no such model (its converter turns these files into
	// "llama" with made-up scores, which merges in a different order); kiln
	// reads it from tokenizer.json only, and Metadata writes it as AsSPM
	// converts it: "llama" with scores from merge ranks.
	ModelHFBPE = "hf-bpe"
)

// NormStep is one normalizer of a tokenizer.json vocab: NFC (when set)
// composes the piece to Unicode Normalization Form C; else Prepend (when
// set) puts its text in front of a non-empty piece; otherwise every Old
// becomes New.
type NormStep struct {
	NFC      bool
	Prepend  string
	Old, New string
}

// Metaspace prepend schemes (tokenizer.json's prepend_scheme).
const (
	PrependAlways = "always" // every word that does not start with the replacement gets one
	PrependFirst  = "first"  // only the word at the very start of the text
	PrependNever  = "never"
)

// Metaspace is tokenizer.json's Metaspace pre-tokenizer (Llama 2 with
// legacy: false, Mistral v0.3): in each piece of normalized text, spaces
// become Replacement, Replacement is put in front as Prepend says (not when
// the piece already starts with it), and with Split the piece is cut before
// every Replacement (each cut is its own BPE word).
type Metaspace struct {
	Replacement string // "▁"
	Prepend     string // PrependAlways, PrependFirst or PrependNever
	Split       bool
}

// HFSettings holds what a vocab read from tokenizer.json needs beyond
// GGUF's fields; that a vocab has it at all means it is tokenized as the
// tokenizers library does (only added tokens are split out, none found by
// text as llama.cpp does). A ModelHFBPE vocab uses all of it; a ModelBPE
// (byte-level) vocab only Normalizer, which may then hold NFC steps alone
// (Qwen2), and CleanSpaces.
type HFSettings struct {
	// CleanSpaces is tokenizer_config.json's clean_up_tokenization_spaces:
	// Decode tidies spaces (llama.cpp's clean_spaces, which is close to
	// transformers' clean_up_tokenization) only when it is set.
	CleanSpaces bool

	Normalizer      []NormStep // applied in order to each piece of text between non-normalized added tokens
	NormalizedAdded []int32    // added tokens matched in normalized text (as their normalized text), increasing
	Metaspace       *Metaspace // pre-tokenizer; nil: each normalized piece is one BPE word
	ByteFallback    bool       // a character that is not a token becomes its <0xNN> byte tokens (when all exist)
	FuseUnk         bool       // consecutive unknown characters become one UNK
	IgnoreMerges    bool       // a word that is a token is taken whole

	// DecodeFirstMarks is the Metaspace decoder's rule (prepend_scheme not
	// never): the first token decodes with every "▁" dropped, not turned
	// into a space.
	DecodeFirstMarks bool
}

// Vocab is a tokenizer's vocabulary and settings, as the tokenizer.ggml.*
// keys of a GGUF file hold them. Token ids index Tokens, Scores and Types.
//
// Special-token ids are -1 when absent. A Vocab read by VocabFromGGUF holds
// the ids llama.cpp resolves on load (its per-model defaults, and EOT/EOM
// found by token text when the file does not name them).
type Vocab struct {
	Model string // tokenizer.ggml.model: ModelSPM ("llama") or ModelBPE ("gpt2")
	Pre   string // tokenizer.ggml.pre: the BPE pre-tokenizer ("gpt-2", "llama-bpe", "qwen2", ...); ignored for SPM
	Name  string // general.name: llama.cpp keys some token-attribute quirks on it (Phi-3's special tokens eat following spaces)

	Tokens []string    // [n] token texts (SPM: "▁" for spaces; BPE: GPT-2 byte spelling)
	Scores []float32   // [n] SPM merge scores (higher merges first); nil means all 0
	Types  []TokenType // [n]; nil means all TypeNormal
	Merges []string    // BPE merges "left right", rank = index

	BOS, EOS, UNK, PAD, SEP int32
	EOT, EOM                int32 // end of turn (<|eot_id|>, <|im_end|>, ...), end of message (<|eom_id|>)
	FIMPre, FIMSuf, FIMMid  int32 // fill-in-the-middle: prefix, suffix, middle
	FIMPad, FIMRep, FIMSep  int32 // fill-in-the-middle: pad, repo name, file separator (all end generation)

	AddBOS, AddEOS bool // EncodePrompt adds BOS in front / EOS at the end
	AddSpacePrefix bool // SPM: a text fragment at the start or after a special token gets a leading space

	ChatTemplate string // tokenizer.chat_template, carried along (kiln synth writes it back)

	HF *HFSettings // set for vocabs read from tokenizer.json (nil from GGUF): the library's rules
}

// NewVocab returns an empty Vocab of the given model with every special id
// set to -1 (absent) and llama.cpp's defaults for the model's flags.
func NewVocab(model string) *Vocab {
	v := &Vocab{
		Model: model,
		BOS:   -1, EOS: -1, UNK: -1, PAD: -1, SEP: -1, EOT: -1, EOM: -1,
		FIMPre: -1, FIMSuf: -1, FIMMid: -1, FIMPad: -1, FIMRep: -1, FIMSep: -1,
	}
	if model == ModelSPM {
		v.AddBOS = true
		v.AddSpacePrefix = true
	}
	return v
}

// Size returns the number of tokens.
func (v *Vocab) Size() int { return len(v.Tokens) }

// Type returns the type of token id (TypeNormal when the vocab has no types).
func (v *Vocab) Type(id int32) TokenType {
	if v.Types == nil {
		return TypeNormal
	}
	return v.Types[id]
}

// specialIDs lists the special-token fields with their GGUF key suffixes
// (tokenizer.ggml.<key>); order is the order Metadata writes them.
func (v *Vocab) specialIDs() []struct {
	key string
	id  *int32
} {
	return []struct {
		key string
		id  *int32
	}{
		{"bos_token_id", &v.BOS},
		{"eos_token_id", &v.EOS},
		{"eot_token_id", &v.EOT},
		{"eom_token_id", &v.EOM},
		{"unknown_token_id", &v.UNK},
		{"seperator_token_id", &v.SEP}, // sic: llama.cpp's spelling
		{"padding_token_id", &v.PAD},
		{"fim_pre_token_id", &v.FIMPre},
		{"fim_suf_token_id", &v.FIMSuf},
		{"fim_mid_token_id", &v.FIMMid},
		{"fim_pad_token_id", &v.FIMPad},
		{"fim_rep_token_id", &v.FIMRep},
		{"fim_sep_token_id", &v.FIMSep},
	}
}

// Validate checks that the vocab is usable: a known model, non-empty token
// list, per-token arrays at least as long as the token list (llama.cpp
// ignores any excess), special ids in range or -1, no duplicate token texts.
func (v *Vocab) Validate() error {
	if err := v.validateShape(); err != nil {
		return err
	}
	_, err := v.textIndex()
	return err
}

// validateShape is Validate without the duplicate check (New does that while
// building its text index).
func (v *Vocab) validateShape() error {
	if v.Model != ModelSPM && v.Model != ModelBPE && v.Model != ModelHFBPE {
		return fmt.Errorf("tokenizer: unsupported tokenizer model %q (want %q, %q or %q)", v.Model, ModelSPM, ModelBPE, ModelHFBPE)
	}
	if v.Model == ModelHFBPE && v.HF == nil {
		return fmt.Errorf("tokenizer: %q vocab without HF settings", ModelHFBPE)
	}
	if err := v.validateHF(); err != nil {
		return err
	}
	n := len(v.Tokens)
	if n == 0 {
		return fmt.Errorf("tokenizer: empty vocabulary")
	}
	if n > 1<<31-1 {
		return fmt.Errorf("tokenizer: %d tokens do not fit int32 ids", n)
	}
	if v.Scores != nil && len(v.Scores) < n {
		return fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) < n {
		return fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), n)
	}
	for _, s := range v.specialIDs() {
		if *s.id < -1 || *s.id >= int32(n) {
			return fmt.Errorf("tokenizer: %s %d out of range [0, %d)", s.key, *s.id, n)
		}
	}
	if v.AddBOS && v.BOS < 0 {
		return fmt.Errorf("tokenizer: vocab asks to add BOS but has no BOS token")
	}
	if v.AddEOS && v.EOS < 0 {
		return fmt.Errorf("tokenizer: vocab asks to add EOS but has no EOS token")
	}
	return nil
}

// textIndex maps each token text to its id. An empty text stands for
// "[EMPTY_<id>]", as llama.cpp renames empty tokens on load.
func (v *Vocab) textIndex() (map[string]int32, error) {
	ids := make(map[string]int32, len(v.Tokens))
	for i, t := range v.Tokens {
		if t == "" {
			t = emptyTokenText(i)
		}
		if j, dup := ids[t]; dup {
			return nil, fmt.Errorf("tokenizer: token %q appears twice (ids %d and %d)", t, j, i)
		}
		ids[t] = int32(i)
	}
	return ids, nil
}

// emptyTokenText is the text llama.cpp gives an empty token on load.
func emptyTokenText(id int) string { return fmt.Sprintf("[EMPTY_%d]", id) }

// Clone returns a deep copy of v.
func (v *Vocab) Clone() *Vocab {
	c := *v
	c.Tokens = append([]string(nil), v.Tokens...)
	if v.Scores != nil {
		c.Scores = append([]float32(nil), v.Scores...)
	}
	if v.Types != nil {
		c.Types = append([]TokenType(nil), v.Types...)
	}
	c.Merges = append([]string(nil), v.Merges...)
	if v.HF != nil {
		h := *v.HF
		h.Normalizer = append([]NormStep(nil), h.Normalizer...)
		h.NormalizedAdded = append([]int32(nil), h.NormalizedAdded...)
		if h.Metaspace != nil {
			ms := *h.Metaspace
			h.Metaspace = &ms
		}
		c.HF = &h
	}
	return &c
}
