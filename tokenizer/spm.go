package tokenizer

// spmModel is llama.cpp's SentencePiece tokenizer (llm_tokenizer_spm): the
// text, with spaces spelled "▁", starts as one symbol per UTF-8 character;
// adjacent symbols whose concatenation is a token are merged, highest token
// score first (ties: leftmost first), until no pair forms a token. Symbols
// that are not tokens fall back to byte tokens <0xNN>.
//
// Merges are confined to stretches of text that some token can span: where
// two adjacent characters never occur next to each other inside any token,
// no merged symbol can cross, so the text is cut there and each chunk is
// merged on its own (same result, small queues; and chunks are cached).
//
//	"▁Hello▁world"  →  "▁Hello" | "▁world"   (no token holds "o▁")
type spmModel struct {
	ids    map[string]int32
	scores []float32  // [n] or nil
	byteID [256]int32 // byte-fallback token per byte, -1 if none
	unk    int32
	pairs  charPairs // adjacent character pairs found inside tokens
}

// charPairs is the set of adjacent character pairs occurring in token
// texts. Characters are split as the tokenizer splits text (by first-byte
// length) and packed into a uint32 each.
type charPairs struct {
	ascii [128 * 128 / 64]uint64 // bitmap of ASCII-ASCII pairs
	other map[uint64]struct{}
}

// packChar packs a character of 1-4 bytes into a uint32; the length tag in
// the top bits keeps "\x00" and "\x00\x00" apart.
func packChar(s []byte) uint32 {
	var c uint32
	for _, b := range s {
		c = c<<8 | uint32(b)
	}
	return c | uint32(len(s)-1)<<30
}

func (p *charPairs) add(a, b []byte) {
	if len(a) == 1 && len(b) == 1 && a[0] < 128 && b[0] < 128 {
		i := int(a[0])<<7 | int(b[0])
		p.ascii[i>>6] |= 1 << (i & 63)
		return
	}
	p.other[uint64(packChar(a))<<32|uint64(packChar(b))] = struct{}{}
}

func (p *charPairs) has(a, b []byte) bool {
	if len(a) == 1 && len(b) == 1 && a[0] < 128 && b[0] < 128 {
		i := int(a[0])<<7 | int(b[0])
		return p.ascii[i>>6]&(1<<(i&63)) != 0
	}
	_, ok := p.other[uint64(packChar(a))<<32|uint64(packChar(b))]
	return ok
}

func newSPM(v *Vocab, ids map[string]int32) *spmModel {
	m := &spmModel{ids: ids, scores: v.Scores, unk: v.UNK}
	m.pairs.other = map[uint64]struct{}{}
	for _, tok := range v.Tokens {
		t := []byte(tok)
		prev := -1
		for off := 0; off < len(t); {
			n := min(utf8Len(t[off]), len(t)-off)
			if prev >= 0 {
				m.pairs.add(t[prev:off], t[off:off+n])
			}
			prev = off
			off += n
		}
	}
	const hex = "0123456789ABCDEF"
	for b := range 256 {
		// llama.cpp's byte_to_token: "<0xNN>", else the one-byte token.
		m.byteID[b] = -1
		if id, ok := ids[string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})]; ok {
			m.byteID[b] = id
		} else if id, ok := ids[string([]byte{byte(b)})]; ok {
			m.byteID[b] = id
		}
	}
	return m
}

// spmSymbol is a span of the escaped text in a doubly linked list.
type spmSymbol struct {
	prev, next int32 // neighbour indexes, -1 at the ends
	off, n     int32 // byte span text[off:off+n]; n == 0 once merged away
}

// spmBigram is a candidate merge of symbols left and right.
type spmBigram struct {
	left, right int32
	score       float32
	size        int32 // byte length of the merged text when queued
}

type spmScratch struct {
	text    []byte
	symbols []spmSymbol
	queue   []spmBigram // max-heap on (score, -left)
	cache   wordCache
}

// encode appends the tokens of one raw-text fragment.
func (m *spmModel) encode(out []int32, raw string, prefixSpace bool, s *spmScratch) []int32 {
	// Escape: optional leading space, then every ' ' as "▁".
	text := s.text[:0]
	if prefixSpace {
		text = append(text, spaceMark...)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] == ' ' {
			text = append(text, spaceMark...)
		} else {
			text = append(text, raw[i])
		}
	}
	s.text = text

	// Cut the text between characters no token holds side by side.
	start, prev := 0, 0
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		if off > start && !m.pairs.has(text[prev:off], text[off:off+n]) {
			out = m.encodeChunk(out, text[start:off], s)
			start = off
		}
		prev = off
		off += n
	}
	if start < len(text) {
		out = m.encodeChunk(out, text[start:], s)
	}
	return out
}

// encodeChunk appends the tokens of one chunk of escaped text.
func (m *spmModel) encodeChunk(out []int32, text []byte, s *spmScratch) []int32 {
	out, hit := s.cache.get(out, text)
	if hit {
		return out
	}
	before := len(out)
	out = m.merge(out, text, s)
	s.cache.put(text, out[before:])
	return out
}

// merge runs the merge loop over one chunk of escaped text.
func (m *spmModel) merge(out []int32, text []byte, s *spmScratch) []int32 {
	// One symbol per UTF-8 character, judged by its first byte only.
	syms := s.symbols[:0]
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		idx := int32(len(syms))
		next := idx + 1
		if off+n == len(text) {
			next = -1
		}
		syms = append(syms, spmSymbol{prev: idx - 1, next: next, off: int32(off), n: int32(n)})
		off += n
	}
	s.symbols = syms

	q := s.queue[:0]
	for i := int32(1); i < int32(len(syms)); i++ {
		q = m.tryBigram(q, text, syms, i-1, i)
	}
	for len(q) > 0 {
		var b spmBigram
		b, q = heapPop(q, spmBefore)
		l, r := &syms[b.left], &syms[b.right]
		// Skip stale candidates: a side was merged away or has grown.
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		q = m.tryBigram(q, text, syms, l.prev, b.left)
		q = m.tryBigram(q, text, syms, b.left, l.next)
	}
	s.queue = q

	for i := int32(0); i != -1; i = syms[i].next {
		sym := syms[i]
		piece := text[sym.off : sym.off+sym.n]
		if id, ok := m.ids[string(piece)]; ok {
			out = append(out, id)
			continue
		}
		// Every merged symbol is a token, so only single characters get
		// here (llama.cpp's resegment then finds no recorded merge either).
		for _, b := range piece {
			switch {
			case m.byteID[b] >= 0:
				out = append(out, m.byteID[b])
			case m.unk >= 0:
				// llama.cpp throws here (no byte token); kiln emits <unk>.
				out = append(out, m.unk)
			}
		}
	}
	return out
}

// tryBigram queues the merge of symbols left and right when their text is a token.
func (m *spmModel) tryBigram(q []spmBigram, text []byte, syms []spmSymbol, left, right int32) []spmBigram {
	if left < 0 || right < 0 {
		return q
	}
	l, r := syms[left], syms[right]
	id, ok := m.ids[string(text[l.off:l.off+l.n+r.n])]
	if !ok {
		return q
	}
	var score float32
	if m.scores != nil {
		score = m.scores[id]
	}
	return heapPush(q, spmBigram{left: left, right: right, score: score, size: l.n + r.n}, spmBefore)
}

// spmBefore orders the queue: higher score first, then lower left index.
func spmBefore(a, b *spmBigram) bool {
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}
