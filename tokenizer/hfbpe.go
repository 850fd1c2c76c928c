package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// hfModel encodes a ModelHFBPE vocab the way the Hugging Face tokenizers
// library does (tokenizers/src/tokenizer/added_vocabulary.rs and
// models/bpe/{model,word}.rs):
//
//	"a <|s|> b"
//	   │ cut out added tokens that are not normalized (leftmost, longest)
//	   │ normalize each remaining piece: Prepend "▁", Replace " " → "▁"
//	   │ (or NFC; see hfnormalize.go)
//	   ▼
//	"▁a▁<|s|>▁b"
//	   │ cut out normalized added tokens, matched as their own normalized
//	   │ text ("▁<|s|>": so "<|s|>" right after another token is plain text)
//	   ▼
//	["▁a"] [<|s|>] ["▁b"]
//	   │ pre-tokenize each piece into words (Metaspace, if the vocab has it)
//	   │ BPE each word: one symbol per character (not a token:
//	   │ its <0xNN> bytes with byte fallback, else UNK, runs fused), then
//	   │ merge the pair of lowest merge rank, leftmost first, until none applies
//	   ▼
//	[85] [1] [80 54]
//
// Unlike SentencePiece (spmModel) merges follow the merge list, not token
// scores, and only pairs the list names are merged.
type hfModel struct {
	ids     map[string]int32
	merges  map[uint64]hfMerge // id(left)<<32 | id(right) → rule
	byteID  [256]int32         // <0xNN> token per byte (byte fallback), -1 if none
	unk     int32
	norm    []NormStep
	raw     addedMatcher     // added tokens matched in the raw text
	normed  addedMatcher     // added tokens matched in normalized text
	control []bool           // [n] control (special) tokens: skipped when not parsing specials
	pieces  map[int32]string // normalized added tokens: their normalized text, which the library decodes
	opts    HFSettings
}

type hfMerge struct{ rank, id int32 }

func newHF(v *Vocab, ids map[string]int32) (*hfModel, error) {
	h := v.HF
	m := &hfModel{ids: ids, unk: v.UNK, norm: h.Normalizer, opts: *h, merges: make(map[uint64]hfMerge, len(v.Merges))}
	for rank, mg := range v.Merges {
		i := strings.IndexByte(mg, ' ')
		if i < 0 {
			return nil, fmt.Errorf("tokenizer: merge %d %q has no space", rank, mg)
		}
		l, lok := ids[mg[:i]]
		r, rok := ids[mg[i+1:]]
		res, resok := ids[mg[:i]+mg[i+1:]]
		if !lok || !rok || !resok {
			return nil, fmt.Errorf("tokenizer: merge %d %q names a token the vocab lacks", rank, mg)
		}
		key := uint64(l)<<32 | uint64(r)
		if _, dup := m.merges[key]; !dup {
			m.merges[key] = hfMerge{int32(rank), res}
		}
	}
	const hex = "0123456789ABCDEF"
	for b := range 256 {
		m.byteID[b] = -1
		if id, ok := ids[string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})]; ok {
			m.byteID[b] = id
		}
	}
	n := len(v.Tokens)
	normalized := make([]bool, n)
	for _, id := range h.NormalizedAdded {
		if id < 0 || int(id) >= n {
			return nil, fmt.Errorf("tokenizer: normalized added token %d out of range [0, %d)", id, n)
		}
		normalized[id] = true
	}
	m.control = make([]bool, n)
	for id := range n {
		switch v.Type(int32(id)) {
		case TypeControl:
			m.control[id] = true
		case TypeUserDefined:
		default:
			continue
		}
		if normalized[id] {
			text := string(m.normalize(nil, v.Tokens[id]))
			m.normed.add(text, int32(id))
			if m.pieces == nil {
				m.pieces = map[int32]string{}
			}
			m.pieces[int32(id)] = text
		} else {
			m.raw.add(v.Tokens[id], int32(id))
		}
	}
	m.raw.finish()
	m.normed.finish()
	return m, nil
}

// normalize appends text run through the normalizer steps.
func (m *hfModel) normalize(dst []byte, text string) []byte {
	return append(dst, normalizeSteps(m.norm, text)...)
}

// addedMatcher finds added tokens in text, leftmost first and, among
// those starting at the same place, longest first (aho-corasick's
// LeftmostLongest, as the tokenizers library matches them).
type addedMatcher struct {
	byFirst map[byte][]addedEntry // by first byte, longest first
}

type addedEntry struct {
	text string
	id   int32
}

func (a *addedMatcher) add(text string, id int32) {
	if text == "" {
		return
	}
	if a.byFirst == nil {
		a.byFirst = map[byte][]addedEntry{}
	}
	a.byFirst[text[0]] = append(a.byFirst[text[0]], addedEntry{text, id})
}

func (a *addedMatcher) finish() {
	for _, es := range a.byFirst {
		sort.SliceStable(es, func(i, j int) bool { return len(es[i].text) > len(es[j].text) })
	}
}

// next returns the first match in text at or after byte i: its start and
// entry, or -1.
func (a *addedMatcher) next(text string, i int, control []bool, parseSpecial bool) (int, addedEntry) {
	if a.byFirst == nil {
		return -1, addedEntry{}
	}
	for ; i < len(text); i++ {
		for _, e := range a.byFirst[text[i]] {
			if (parseSpecial || !control[e.id]) && strings.HasPrefix(text[i:], e.text) {
				return i, e
			}
		}
	}
	return -1, addedEntry{}
}

type hfScratch struct {
	norm    []byte
	pre     []byte // a normalized piece after the Metaspace pre-tokenizer
	symbols []hfSymbol
	queue   []hfBigram
	cache   wordCache
}

// encode appends the tokens of text.
func (m *hfModel) encode(out []int32, text string, parseSpecial bool, s *hfScratch) []int32 {
	for pos := 0; pos <= len(text); {
		at, e := m.raw.next(text, pos, m.control, parseSpecial)
		end := at
		if at < 0 {
			end = len(text)
		}
		if end > pos {
			s.norm = m.normalize(s.norm[:0], text[pos:end])
			out = m.encodeNormalized(out, string(s.norm), pos == 0, parseSpecial, s)
		}
		if at < 0 {
			break
		}
		out = append(out, e.id)
		pos = at + len(e.text)
	}
	return out
}

// encodeNormalized appends the tokens of normalized text; first tells
// whether it starts the whole text.
func (m *hfModel) encodeNormalized(out []int32, text string, first, parseSpecial bool, s *hfScratch) []int32 {
	for pos := 0; pos < len(text); {
		at, e := m.normed.next(text, pos, m.control, parseSpecial)
		end := at
		if at < 0 {
			end = len(text)
		}
		if end > pos {
			out = m.encodePiece(out, text[pos:end], first && pos == 0, s)
		}
		if at < 0 {
			break
		}
		out = append(out, e.id)
		pos = at + len(e.text)
	}
	return out
}

// encodePiece appends the tokens of a piece of normalized text between
// added tokens: pre-tokenized into words (Metaspace), each word BPE'd.
func (m *hfModel) encodePiece(out []int32, piece string, first bool, s *hfScratch) []int32 {
	ms := m.opts.Metaspace
	if ms == nil {
		return m.encodeCached(out, piece, s)
	}
	s.pre = ms.appendPreTokenized(s.pre[:0], piece, first)
	text := string(s.pre)
	for i := 0; i < len(text); {
		j := ms.nextWord(text, i)
		out = m.encodeCached(out, text[i:j], s)
		i = j
	}
	return out
}

// encodeCached is encodeWord through the word cache.
func (m *hfModel) encodeCached(out []int32, word string, s *hfScratch) []int32 {
	var hit bool
	if out, hit = s.cache.get(out, []byte(word)); !hit {
		before := len(out)
		out = m.encodeWord(out, word, s)
		s.cache.put([]byte(word), out[before:])
	}
	return out
}

// hfSymbol is a token of the word in a doubly linked list.
type hfSymbol struct {
	prev, next int32 // neighbour indexes, -1 at the ends
	id         int32
	n          int32 // byte length; 0 once merged away
}

// hfBigram is a candidate merge of the symbol at left with its successor.
type hfBigram struct {
	left, rank, id int32
}

// hfBefore orders the queue: lower rank first, then lower position.
func hfBefore(a, b *hfBigram) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}

// encodeWord appends the tokens of one word (models/bpe/model.rs
// merge_word, word.rs merge_all).
func (m *hfModel) encodeWord(out []int32, word string, s *hfScratch) []int32 {
	if m.opts.IgnoreMerges {
		if id, ok := m.ids[word]; ok {
			return append(out, id)
		}
	}
	syms := s.symbols[:0]
	push := func(id, n int32) {
		syms = append(syms, hfSymbol{prev: int32(len(syms)) - 1, next: -1, id: id, n: n})
		if len(syms) > 1 {
			syms[len(syms)-2].next = int32(len(syms)) - 1
		}
	}
	// An unknown character becomes a pending UNK, added when a character
	// with a token comes, or at the end; with FuseUnk, later unknown
	// characters join it. Byte-fallback tokens do not flush it (so "xé"
	// is <0xC3> <0xA9> <unk>), as in the library.
	pendingUnk, pendingLen := false, int32(0)
	flush := func() {
		if pendingUnk {
			push(m.unk, pendingLen)
			pendingUnk = false
		}
	}
	for i := 0; i < len(word); {
		_, size := utf8.DecodeRuneInString(word[i:])
		ch := word[i : i+size]
		i += size
		if id, ok := m.ids[ch]; ok {
			flush()
			push(id, int32(size))
			continue
		}
		if m.opts.ByteFallback {
			all := true
			for j := 0; j < len(ch); j++ {
				all = all && m.byteID[ch[j]] >= 0
			}
			if all {
				for j := 0; j < len(ch); j++ {
					push(m.byteID[ch[j]], 1)
				}
				continue
			}
		}
		if m.unk < 0 {
			continue // no unknown token: the character is dropped
		}
		if pendingUnk && m.opts.FuseUnk {
			pendingLen += int32(size)
			continue
		}
		flush()
		pendingUnk, pendingLen = true, int32(size)
	}
	flush()

	q := s.queue[:0]
	for i := int32(1); i < int32(len(syms)); i++ {
		q = m.tryMerge(q, syms, i-1)
	}
	for len(q) > 0 {
		var b hfBigram
		b, q = heapPop(q, hfBefore)
		l := &syms[b.left]
		if l.n == 0 || l.next < 0 {
			continue
		}
		// Stale unless the pair there now still makes the same token.
		r := &syms[l.next]
		if mg, ok := m.merges[uint64(l.id)<<32|uint64(r.id)]; !ok || mg.id != b.id {
			continue
		}
		l.id = b.id
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		if l.prev >= 0 {
			q = m.tryMerge(q, syms, l.prev)
		}
		q = m.tryMerge(q, syms, b.left)
	}
	s.queue = q
	s.symbols = syms
	for i := int32(0); len(syms) > 0 && i != -1; i = syms[i].next {
		out = append(out, syms[i].id)
	}
	return out
}

func (m *hfModel) tryMerge(q []hfBigram, syms []hfSymbol, left int32) []hfBigram {
	r := syms[left].next
	if r < 0 {
		return q
	}
	mg, ok := m.merges[uint64(syms[left].id)<<32|uint64(syms[r].id)]
	if !ok {
		return q
	}
	return heapPush(q, hfBigram{left: left, rank: mg.rank, id: mg.id}, hfBefore)
}
