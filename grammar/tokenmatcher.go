package grammar

import "fmt"

// TokenMatcher follows one sequence's tokens through a grammar and tells
// which tokens may come next. Not safe for concurrent use; Clone gives an
// independent copy. Typical use per decoding step:
//
//	if !tm.Allows(sampled) {        // fast path: check the sampled token
//		tm.FillMask(mask)           // slow path: the full mask, then resample
//		...
//	}
//	tm.AcceptToken(sampled)
type TokenMatcher struct {
	idx   *TokenIndex
	m     *Matcher
	toks  []tokenMark // one per accepted token
	walk  []int32     // scratch: set per trie depth
	chain []int32     // scratch: ancestors of a range start
}

type tokenMark struct {
	pos int  // matcher position after the token
	eog bool // the token ended generation
}

// NewTokenMatcher returns a matcher at the start of the grammar.
func (x *TokenIndex) NewTokenMatcher() (*TokenMatcher, error) {
	m, err := NewMatcher(x.prog)
	if err != nil {
		return nil, err
	}
	return &TokenMatcher{idx: x, m: m}, nil
}

// Ended reports whether an end-of-generation token has been accepted.
func (t *TokenMatcher) Ended() bool {
	return len(t.toks) > 0 && t.toks[len(t.toks)-1].eog
}

// CanEnd reports whether the text so far is a complete match (so an
// end-of-generation token is allowed).
func (t *TokenMatcher) CanEnd() bool { return !t.Ended() && t.m.CanEnd() }

// Tokens returns the number of tokens accepted.
func (t *TokenMatcher) Tokens() int { return len(t.toks) }

// Bytes returns the number of text bytes accepted.
func (t *TokenMatcher) Bytes() int { return t.m.Pos() }

// Allows reports whether token id may come next, walking only its bytes.
func (t *TokenMatcher) Allows(id int32) bool {
	v := t.idx.vocab
	if id < 0 || int(id) >= v.Size() || t.Ended() {
		return false
	}
	if v.eog[id] {
		return t.m.CanEnd()
	}
	b := v.bytes[id]
	return b != nil && t.m.Accepts(b)
}

// AcceptToken advances past token id, or returns an error (and changes
// nothing) when the token is not allowed.
func (t *TokenMatcher) AcceptToken(id int32) error {
	v := t.idx.vocab
	switch {
	case id < 0 || int(id) >= v.Size():
		return fmt.Errorf("grammar: token %d outside the vocabulary of %d", id, v.Size())
	case t.Ended():
		return fmt.Errorf("grammar: token %d after the end of generation", id)
	case v.eog[id]:
		if !t.m.CanEnd() {
			return fmt.Errorf("grammar: end-of-generation token %d before the grammar can end", id)
		}
		t.toks = append(t.toks, tokenMark{t.m.Pos(), true})
		return nil
	case v.bytes[id] == nil:
		return fmt.Errorf("grammar: token %d is never allowed in constrained text", id)
	}
	if err := t.m.Advance(v.bytes[id]); err != nil {
		return fmt.Errorf("grammar: token %d (%q): %w", id, v.bytes[id], err)
	}
	t.toks = append(t.toks, tokenMark{t.m.Pos(), false})
	return nil
}

// Rollback undoes the last n accepted tokens.
func (t *TokenMatcher) Rollback(n int) error {
	if n < 0 || n > len(t.toks) {
		return fmt.Errorf("grammar: roll back %d tokens, %d accepted", n, len(t.toks))
	}
	t.toks = t.toks[:len(t.toks)-n]
	pos := 0
	if len(t.toks) > 0 {
		pos = t.toks[len(t.toks)-1].pos
	}
	return t.m.Reset(pos)
}

// Clone returns an independent copy at the same position.
func (t *TokenMatcher) Clone() *TokenMatcher {
	return &TokenMatcher{idx: t.idx, m: t.m.Clone(), toks: append([]tokenMark(nil), t.toks...)}
}

// FillMask sets mask (MaskWords(vocabulary size) words) to the tokens
// allowed next: text tokens whose bytes the grammar accepts from here, and
// the end-of-generation tokens when the grammar can end. Control and other
// non-text tokens are never set. After an end-of-generation token the mask is
// empty.
func (t *TokenMatcher) FillMask(mask []uint64) {
	v := t.idx.vocab
	if len(mask) != MaskWords(v.Size()) {
		panic(fmt.Sprintf("grammar: mask of %d words for a vocabulary of %d tokens", len(mask), v.Size()))
	}
	if t.Ended() {
		clear(mask)
		return
	}
	t.m.maybeCompact()
	st := t.m.st
	root := t.m.cur()
	pm := t.idx.part(st, root)
	copy(mask, pm.accept)
	t.walkRanges(mask, pm.ranges, root)
	if t.m.CanEnd() {
		for id, e := range v.eog {
			if e {
				setBit(mask, int32(id))
			}
		}
	}
}

// walkRanges walks the trie ranges whose tokens depend on the parse stack,
// from the real set root, and sets the tokens it accepts.
func (t *TokenMatcher) walkRanges(mask []uint64, ranges []int32, root int32) {
	tr := &t.idx.vocab.trie
	st := t.m.st
	if cap(t.walk) < tr.maxDepth+1 {
		t.walk = make([]int32, tr.maxDepth+1)
	}
	walk := t.walk[:tr.maxDepth+1]
	walk[0] = root
	for r := 0; r < len(ranges); r += 2 {
		a, e := ranges[r], ranges[r+1]
		// The sets along the path to a's parent.
		chain := t.chain[:0]
		for p := tr.parent[a]; p > 0; p = tr.parent[p] {
			chain = append(chain, p)
		}
		t.chain = chain
		alive := true
		for k := len(chain) - 1; k >= 0; k-- {
			n := chain[k]
			s := st.step(walk[tr.depth[n]-1], tr.label[n])
			if s == deadState {
				alive = false // not reached: the abstract walk got past these bytes
				break
			}
			walk[tr.depth[n]] = s
		}
		if !alive {
			continue
		}
		for i := a; i < e; {
			d := tr.depth[i]
			s := st.step(walk[d-1], tr.label[i])
			if s == deadState {
				i = tr.end[i]
				continue
			}
			walk[d] = s
			for _, id := range tr.tokensAt(i) {
				setBit(mask, id)
			}
			i++
		}
	}
}
