package tokenizer

import (
	"fmt"
	"strings"
	"sync"
)

// Tokenizer turns text into token ids and back, as llama.cpp's llama_vocab
// does for the same vocabulary. It is immutable after New and safe for
// concurrent use.
type Tokenizer struct {
	v     *Vocab           // private copy, special ids resolved
	ids   map[string]int32 // token text → id
	attrs []attr           // [n] per-token attributes
	eog   map[int32]bool   // end-of-generation ids

	specials    []int32     // control/user-defined/unknown ids, longest text first
	specialRank []int32     // [n] index of a token in specials, -1 if none
	trie        specialTrie // all of specials, for finding which occur in a text
	pieces      []byte      // token pieces back to back (token_to_piece with special=true)
	pieceEnd    []uint32    // [n] end offset of each token's piece in pieces
	cleanSpaces bool        // Decode tidies " ," " 's" ... (llama.cpp's clean_spaces)
	spm         *spmModel   // non-nil for SentencePiece vocabs
	bpe         *bpeModel   // non-nil for byte-level BPE vocabs
	hf          *hfModel    // non-nil for Hugging Face character BPE vocabs
	nfc         bool        // byte-level BPE from tokenizer.json: raw text pieces are NFC-composed first
	scratch     sync.Pool   // *session: per-call buffers, reused
}

// New builds a tokenizer for v. The tokenizer keeps its own copy of v (with
// EOT, EOM and FIM ids found by token text where v names none); later
// changes to v do not affect it.
func New(v *Vocab) (*Tokenizer, error) {
	if v == nil {
		return nil, fmt.Errorf("tokenizer: nil vocab")
	}
	if err := v.validateShape(); err != nil {
		return nil, err
	}
	v = v.Clone()
	n := len(v.Tokens)
	// Trim per-token arrays to the token count; replace empty texts as llama.cpp does.
	if v.Scores != nil {
		v.Scores = v.Scores[:n]
	}
	if v.Types != nil {
		v.Types = v.Types[:n]
	}
	for i, t := range v.Tokens {
		if t == "" {
			v.Tokens[i] = emptyTokenText(i)
		}
	}
	ids, err := v.textIndex()
	if err != nil {
		return nil, err
	}
	detected := v.resolveSpecials(ids)
	t := &Tokenizer{v: v, ids: ids}
	t.attrs, t.eog = tokenAttrs(v, ids, detected)
	t.specials = specialsByLength(v.Tokens, t.attrs)
	t.specialRank = make([]int32, n)
	for i := range t.specialRank {
		t.specialRank[i] = -1
	}
	for r, id := range t.specials {
		t.specialRank[id] = int32(r)
	}
	t.trie = newSpecialTrie(v.Tokens, t.specials)

	switch v.Model {
	case ModelSPM:
		t.spm = newSPM(v, ids)
	case ModelBPE:
		if t.bpe, err = newBPE(v, ids); err != nil {
			return nil, err
		}
		t.cleanSpaces = t.bpe.pre.cleanSpaces
		t.nfc = v.HF != nil && hasNFC(v.HF.Normalizer)
	case ModelHFBPE:
		if t.hf, err = newHF(v, ids); err != nil {
			return nil, err
		}
	}
	if v.HF != nil {
		t.cleanSpaces = v.HF.CleanSpaces
	}
	t.buildPieces()
	applyNameQuirks(v, ids, t.attrs, t.specials)
	t.scratch.New = func() any { return new(session) }
	return t, nil
}

// Vocab returns the tokenizer's vocabulary (its own copy; do not modify).
func (t *Tokenizer) Vocab() *Vocab { return t.v }

// Size returns the number of tokens in the vocabulary.
func (t *Tokenizer) Size() int { return len(t.v.Tokens) }

// BOS returns the beginning-of-sequence id, or -1.
func (t *Tokenizer) BOS() int32 { return t.v.BOS }

// EOS returns the end-of-sequence id, or -1.
func (t *Tokenizer) EOS() int32 { return t.v.EOS }

// EOT returns the end-of-turn id, or -1.
func (t *Tokenizer) EOT() int32 { return t.v.EOT }

// EOM returns the end-of-message id, or -1.
func (t *Tokenizer) EOM() int32 { return t.v.EOM }

// UNK returns the unknown-token id, or -1.
func (t *Tokenizer) UNK() int32 { return t.v.UNK }

// PAD returns the padding id, or -1.
func (t *Tokenizer) PAD() int32 { return t.v.PAD }

// IsEOG reports whether id ends generation: EOS, EOT, EOM, the FIM pad/repo/
// file-separator tokens, and every token whose text llama.cpp lists as an
// end of generation (<|im_end|>, <|endoftext|>, <end_of_turn>, ...).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// EOG returns the end-of-generation ids in increasing order.
func (t *Tokenizer) EOG() []int32 {
	out := make([]int32, 0, len(t.eog))
	for id := range int32(len(t.v.Tokens)) {
		if t.eog[id] {
			out = append(out, id)
		}
	}
	return out
}

// ID returns the id of the token whose text is exactly text.
func (t *Tokenizer) ID(text string) (int32, bool) {
	id, ok := t.ids[text]
	return id, ok
}

// IsControl reports whether id is a control token (rendered by Piece and
// Decode, split out of text only when parsing specials).
func (t *Tokenizer) IsControl(id int32) bool {
	return t.valid(id) && t.attrs[id]&attrControl != 0
}

func (t *Tokenizer) valid(id int32) bool { return id >= 0 && int(id) < len(t.v.Tokens) }

// Piece returns the text of one token, as llama.cpp's token_to_piece with
// special=true: control tokens as their text, SentencePiece "▁" as a space,
// byte tokens as their raw byte, byte-level BPE spelling decoded to raw
// bytes. A piece may be an incomplete UTF-8 sequence. Out-of-range ids give "".
func (t *Tokenizer) Piece(id int32) string {
	return string(t.piece(id))
}

// piece returns the bytes of token id's piece (nil for out-of-range ids).
func (t *Tokenizer) piece(id int32) []byte {
	if !t.valid(id) {
		return nil
	}
	var lo uint32
	if id > 0 {
		lo = t.pieceEnd[id-1]
	}
	return t.pieces[lo:t.pieceEnd[id]]
}

// buildPieces fills the piece cache (llama.cpp's cache_token_to_piece).
func (t *Tokenizer) buildPieces() {
	n := len(t.v.Tokens)
	t.pieceEnd = make([]uint32, n)
	buf := make([]byte, 0, n*4)
	for id := range n {
		buf = t.appendPieceUncached(buf, int32(id))
		t.pieceEnd[id] = uint32(len(buf))
	}
	t.pieces = buf
}

// appendPieceUncached is llama.cpp's token_to_piece(special=true) without
// the cache. Attributes are tested in llama.cpp's order: a control token
// that is also normal renders as its raw text.
func (t *Tokenizer) appendPieceUncached(dst []byte, id int32) []byte {
	text := t.v.Tokens[id]
	a := t.attrs[id]
	if t.hf != nil {
		// The tokenizers library decodes a normalized added token as its
		// normalized text ("<unk>" → "▁<unk>" → " <unk>").
		if p, ok := t.hf.pieces[id]; ok {
			return appendUnescaped(dst, p)
		}
	}
	switch {
	case a&attrSpecial != 0:
		return append(dst, text...)
	case a&attrNormal != 0:
		if t.spm != nil || t.hf != nil {
			return appendUnescaped(dst, text)
		}
		return byteDecodeToken(dst, text)
	case a&attrByte != 0:
		if b, ok := byteTokenValue(text); ok {
			return append(dst, b)
		}
		return dst
	}
	return dst // undefined and unused tokens render as nothing
}

// firstPiece is the piece of id when it is the first token decoded: for
// vocabs with a dummy-prefix space less one leading space; with the
// Metaspace decoder's rule, a normal token's text with every "▁" dropped.
func (t *Tokenizer) firstPiece(id int32) []byte {
	p := t.piece(id)
	if t.v.AddSpacePrefix && len(p) > 0 && p[0] == ' ' {
		return p[1:]
	}
	if t.hf != nil && t.hf.opts.DecodeFirstMarks && t.valid(id) && t.attrs[id]&attrNormal != 0 && t.hf.pieces[id] == "" {
		return []byte(strings.ReplaceAll(t.v.Tokens[id], spaceMark, ""))
	}
	return p
}

// appendUnescaped appends text with SentencePiece's "▁" turned back into spaces.
func appendUnescaped(dst []byte, text string) []byte {
	for {
		i := strings.Index(text, spaceMark)
		if i < 0 {
			return append(dst, text...)
		}
		dst = append(dst, text[:i]...)
		dst = append(dst, ' ')
		text = text[i+len(spaceMark):]
	}
}

// spaceMark is SentencePiece's visible space, U+2581 "▁".
const spaceMark = "\u2581"

// byteTokenValue parses a byte token "<0xNN>" the way llama.cpp's
// token_to_byte does (strtol of the two characters after "<0x").
func byteTokenValue(text string) (byte, bool) {
	if len(text) < 5 || !strings.HasPrefix(text, "<0x") {
		return 0, false
	}
	v, ok := 0, false
	for _, c := range []byte(text[3:5]) {
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return byte(v), ok
		}
		v, ok = v*16+d, true
	}
	return byte(v), ok
}
