package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The tokenizers library's normalizers and Metaspace pre-tokenizer, as
// tokenizer.json vocabs use them (tokenizers/src/normalizers/{unicode,
// prepend,replace}.rs, pre_tokenizers/metaspace.rs):
//
//	"e\u0301 a  b"     a piece of text between non-normalized added tokens
//	   │ NFC            "é a  b"  (composed: U+00E9)
//	   │ Metaspace      spaces → "▁", "▁" in front unless there already
//	   ▼
//	"▁é▁a▁▁b"
//	   │ split: true    cut before every "▁" (each cut one BPE word)
//	   ▼
//	["▁é"] ["▁a"] ["▁"] ["▁b"]
//
// NFC uses golang.org/x/text/unicode/norm (Unicode 15.0.0); the library's
// unicode-normalization crate may know a later version, which differs
// only on code points assigned since.

// normalizeSteps returns text run through steps in order.
func normalizeSteps(steps []NormStep, text string) string {
	for _, st := range steps {
		switch {
		case st.NFC:
			text = norm.NFC.String(text)
		case st.Prepend != "":
			if text != "" {
				text = st.Prepend + text
			}
		default:
			text = strings.ReplaceAll(text, st.Old, st.New)
		}
	}
	return text
}

// hasNFC reports whether steps compose to NFC.
func hasNFC(steps []NormStep) bool {
	for _, st := range steps {
		if st.NFC {
			return true
		}
	}
	return false
}

// appendPreTokenized appends to dst the piece as the Metaspace
// pre-tokenizer rewrites it (spaces replaced, Replacement prepended as the
// scheme says); first tells whether the piece starts the text (offset 0 of
// the original, which PrependFirst asks for).
func (ms *Metaspace) appendPreTokenized(dst []byte, piece string, first bool) []byte {
	if piece == "" {
		return dst
	}
	prepend := false
	switch ms.Prepend {
	case PrependAlways:
		prepend = true
	case PrependFirst:
		prepend = first
	}
	// The library prepends only when the piece, spaces already replaced,
	// does not start with the replacement.
	if prepend && piece[0] != ' ' && !strings.HasPrefix(piece, ms.Replacement) {
		dst = append(dst, ms.Replacement...)
	}
	for {
		i := strings.IndexByte(piece, ' ')
		if i < 0 {
			return append(dst, piece...)
		}
		dst = append(dst, piece[:i]...)
		dst = append(dst, ms.Replacement...)
		piece = piece[i+1:]
	}
}

// nextWord returns the end of the word that starts at byte i of a
// pre-tokenized piece: with Split, just before the next Replacement after
// i (SplitDelimiterBehavior::MergedWithNext); else the end of the piece.
func (ms *Metaspace) nextWord(text string, i int) int {
	if !ms.Split {
		return len(text)
	}
	j := i
	if strings.HasPrefix(text[j:], ms.Replacement) {
		j += len(ms.Replacement)
	}
	if k := strings.Index(text[j:], ms.Replacement); k >= 0 {
		return j + k
	}
	return len(text)
}

// validate checks a Metaspace read from a file or built by hand.
func (ms *Metaspace) validate() error {
	if r, n := utf8.DecodeRuneInString(ms.Replacement); n == 0 || n != len(ms.Replacement) || r == utf8.RuneError || r == ' ' {
		return fmt.Errorf("tokenizer: Metaspace replacement %q is not one character other than a space", ms.Replacement)
	}
	switch ms.Prepend {
	case PrependAlways, PrependFirst, PrependNever:
		return nil
	}
	return fmt.Errorf("tokenizer: Metaspace prepend_scheme %q (want %q, %q or %q)", ms.Prepend, PrependAlways, PrependFirst, PrependNever)
}

// validateHF checks v.HF against the model: a byte-level vocab may only
// ask for NFC and CleanSpaces, an SPM vocab for nothing.
func (v *Vocab) validateHF() error {
	h := v.HF
	if h == nil {
		return nil
	}
	switch v.Model {
	case ModelHFBPE:
	case ModelBPE:
		for _, st := range h.Normalizer {
			if !st.NFC {
				return fmt.Errorf("tokenizer: a %q vocab's HF normalizer may only be NFC, not %+v", ModelBPE, st)
			}
		}
		if len(h.NormalizedAdded) > 0 || h.Metaspace != nil || h.ByteFallback || h.FuseUnk || h.IgnoreMerges || h.DecodeFirstMarks {
			return fmt.Errorf("tokenizer: a %q vocab's HF settings may only hold an NFC normalizer", ModelBPE)
		}
		return nil
	default:
		return fmt.Errorf("tokenizer: a %q vocab has no HF settings", v.Model)
	}
	if h.Metaspace != nil {
		if err := h.Metaspace.validate(); err != nil {
			return err
		}
	}
	return nil
}
