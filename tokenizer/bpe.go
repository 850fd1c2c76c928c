package tokenizer

import (
	"fmt"
	"strings"
)

// bpeModel is llama.cpp's byte-level BPE tokenizer (llm_tokenizer_bpe): the
// pre-tokenizer splits text into words; each word, spelled in GPT-2's byte
// characters, starts as one symbol per byte and adjacent symbols are merged
// lowest merge rank first (ties: leftmost first) while a merge rule applies.
// A final symbol that is not a token is emitted byte by byte as one-character
// tokens where those exist (and dropped otherwise, as llama.cpp does).
//
// Merge rules are strings ("left right"); to merge without building strings
// every distinct side text gets a small integer (its "side" id), so a rule is
// a pair of side ids and a merged symbol's side id is known in advance:
//
//	rank r: "Ġ t"  →  pair (side("Ġ"), side("t")) → r,  result[r] = side("Ġt") or -1
type bpeModel struct {
	ids       map[string]int32
	pre       preTokenizer
	pairRank  map[uint64]int32 // side(left)<<32 | side(right) → lowest rank of that rule
	result    []int32          // [rank] side id of the merged text, -1 if it is no rule's side
	byteSide  [256]int32       // side id of each byte's one-character spelling, -1 if none
	byteToken [256]int32       // token whose text is the one byte b, -1 if none (fallback for a symbol that is not a token)
}

func newBPE(v *Vocab, ids map[string]int32) (*bpeModel, error) {
	pre, err := lookupPre(v.Pre)
	if err != nil {
		return nil, err
	}
	m := &bpeModel{ids: ids, pre: pre, pairRank: make(map[uint64]int32, len(v.Merges))}
	side := make(map[string]int32, len(v.Merges))
	sideOf := func(s string) int32 {
		id, ok := side[s]
		if !ok {
			id = int32(len(side))
			side[s] = id
		}
		return id
	}
	type rule struct{ l, r string }
	rules := make([]rule, len(v.Merges))
	for rank, mg := range v.Merges {
		// llama.cpp splits at the first space after the first byte; a rule
		// without one becomes the pair ("", "").
		var l, r string
		if i := strings.IndexByte(mg[min(1, len(mg)):], ' '); i >= 0 {
			i += min(1, len(mg))
			l, r = mg[:i], mg[i+1:]
		}
		rules[rank] = rule{l, r}
		key := uint64(sideOf(l))<<32 | uint64(sideOf(r))
		if _, dup := m.pairRank[key]; !dup { // the first rule wins, as with emplace
			m.pairRank[key] = int32(rank)
		}
	}
	m.result = make([]int32, len(rules))
	for rank, ru := range rules {
		m.result[rank] = -1
		if id, ok := side[ru.l+ru.r]; ok {
			m.result[rank] = id
		}
	}
	for b := range 256 {
		m.byteSide[b] = -1
		if id, ok := side[byteToUTF8[b]]; ok {
			m.byteSide[b] = id
		}
		m.byteToken[b] = -1
		if id, ok := ids[string([]byte{byte(b)})]; ok {
			m.byteToken[b] = id
		}
	}
	if len(v.Merges) > 1<<31-1 {
		return nil, fmt.Errorf("tokenizer: %d merges do not fit int32 ranks", len(v.Merges))
	}
	return m, nil
}

// bpeSymbol is a span of the encoded word in a doubly linked list.
type bpeSymbol struct {
	prev, next int32 // neighbour indexes, -1 at the ends
	off, n     int32 // byte span of the encoded word; n == 0 once merged away
	side       int32 // side id of the symbol's text, -1 if no rule mentions it
}

// bpeBigram is a candidate merge of symbols left and right.
type bpeBigram struct {
	left, right int32
	rank        int32
	size        int32 // byte length of the merged text when queued
}

type bpeScratch struct {
	raw     []byte   // the fragment re-encoded from its code points
	cpts    []uint32 // [len] code points of the fragment
	flags   []uint16 // [len] their flags
	words   []int32  // word lengths in code points
	tmp     []int32
	word    []byte // current word, byte-level spelled
	wordRaw []byte // current word, raw UTF-8
	symbols []bpeSymbol
	queue   []bpeBigram // min-heap on (rank, left)
	cache   wordCache
}

// encode appends the tokens of one raw-text fragment.
func (m *bpeModel) encode(out []int32, text string, s *bpeScratch) []int32 {
	// Code points as llama.cpp decodes them (invalid bytes become U+FFFD).
	cp, fl := s.cpts[:0], s.flags[:0]
	for i := 0; i < len(text); {
		c, n := decodeCpt(text, i)
		cp = append(cp, c)
		fl = append(fl, cptFlags(c))
		i += n
	}
	s.cpts, s.flags = cp, fl
	words, tmp := m.pre.pretokenize(cp, fl, s.words, s.tmp)
	s.words, s.tmp = words, tmp

	start := 0
	for _, n := range words {
		end := start + int(n)
		raw := s.wordRaw[:0]
		for _, c := range cp[start:end] {
			raw = appendCpt(raw, c)
		}
		s.wordRaw = raw
		var hit bool
		if out, hit = s.cache.get(out, raw); !hit {
			before := len(out)
			out = m.encodeWord(out, raw, s)
			s.cache.put(raw, out[before:])
		}
		start = end
	}
	return out
}

// encodeWord appends the tokens of one pre-tokenized word (raw UTF-8).
func (m *bpeModel) encodeWord(out []int32, raw []byte, s *bpeScratch) []int32 {
	word := byteEncode(s.word[:0], raw)
	s.word = word
	if m.pre.ignoreMerges {
		if id, ok := m.ids[string(word)]; ok {
			return append(out, id)
		}
	}
	// One symbol per raw byte (each is one character, 1-2 bytes, of word).
	syms := s.symbols[:0]
	off := int32(0)
	for i, b := range raw {
		n := int32(len(byteToUTF8[b]))
		next := int32(i + 1)
		if i == len(raw)-1 {
			next = -1
		}
		syms = append(syms, bpeSymbol{prev: int32(i - 1), next: next, off: off, n: n, side: m.byteSide[b]})
		off += n
	}
	s.symbols = syms

	q := s.queue[:0]
	for i := int32(1); i < int32(len(syms)); i++ {
		q = m.tryBigram(q, syms, i-1, i)
	}
	for len(q) > 0 {
		var b bpeBigram
		b, q = heapPop(q, bpeBefore)
		l, r := &syms[b.left], &syms[b.right]
		// Skip stale candidates: a side was merged away or has grown
		// (llama.cpp compares texts; the spans are equivalent).
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		l.side = m.result[b.rank]
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		q = m.tryBigram(q, syms, l.prev, b.left)
		q = m.tryBigram(q, syms, b.left, l.next)
	}
	s.queue = q

	for i := int32(0); i != -1; i = syms[i].next {
		sym := syms[i]
		piece := word[sym.off : sym.off+sym.n]
		if id, ok := m.ids[string(piece)]; ok {
			out = append(out, id)
			continue
		}
		for _, b := range piece {
			if id := m.byteToken[b]; id >= 0 {
				out = append(out, id)
			}
		}
	}
	return out
}

func (m *bpeModel) tryBigram(q []bpeBigram, syms []bpeSymbol, left, right int32) []bpeBigram {
	if left < 0 || right < 0 {
		return q
	}
	l, r := syms[left], syms[right]
	if l.side < 0 || r.side < 0 {
		return q
	}
	rank, ok := m.pairRank[uint64(l.side)<<32|uint64(r.side)]
	if !ok {
		return q
	}
	return heapPush(q, bpeBigram{left: left, right: right, rank: rank, size: l.n + r.n}, bpeBefore)
}

// bpeBefore orders the queue: lower rank first, then lower left index.
func bpeBefore(a, b *bpeBigram) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}
