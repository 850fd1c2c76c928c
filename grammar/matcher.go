package grammar

import (
	"errors"
	"fmt"
)

// ErrEmptyLanguage is returned by NewMatcher for a program that derives no
// string.
var ErrEmptyLanguage = errors.New("grammar: the grammar matches nothing")

// maxStoreStates and maxStoreBytes bound a matcher's interned sets before
// it compacts them: by count, and by memory for grammars whose sets hold
// many items (a long enum whose strings share their first bytes).
const (
	maxStoreStates = 1 << 16
	maxStoreBytes  = 16 << 20
)

// Matcher matches bytes against a Program incrementally. It keeps the set
// after every byte, so it can go back to any earlier position (speculative
// decoding rejects tokens) in O(1). A Matcher is not safe for concurrent use;
// Clone gives an independent copy.
type Matcher struct {
	st        *store
	hist      []int32 // hist[i]: the Earley set after i bytes; hist[0] is the start
	compactAt int     // compact the store when it holds more sets than this
	compactBy int64   // or more bytes than this
}

// NewMatcher returns a matcher at the start of the input.
func NewMatcher(p *Program) (*Matcher, error) {
	if p.Empty() {
		return nil, ErrEmptyLanguage
	}
	st := newStore(p)
	start := st.closeAndIntern([]item{{p.ruleStart[p.root], originSelf}})
	return &Matcher{st: st, hist: []int32{start}, compactAt: maxStoreStates, compactBy: maxStoreBytes}, nil
}

// Pos returns the number of bytes accepted so far.
func (m *Matcher) Pos() int { return len(m.hist) - 1 }

func (m *Matcher) cur() int32 { return m.hist[len(m.hist)-1] }

// RejectError tells which byte of an Advance the grammar refused.
type RejectError struct {
	Pos  int  // offset of the byte in the whole input
	Byte byte // the byte
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("grammar: byte %q at offset %d is not allowed here", e.Byte, e.Pos)
}

// Advance accepts bs. When some byte is rejected it returns a *RejectError
// and leaves the matcher as it was before the call.
func (m *Matcher) Advance(bs []byte) error {
	m.maybeCompact()
	n := len(m.hist)
	cur := m.cur()
	for i, b := range bs {
		cur = m.st.step(cur, b)
		if cur == deadState {
			m.hist = m.hist[:n]
			return &RejectError{Pos: n - 1 + i, Byte: b}
		}
		m.hist = append(m.hist, cur)
	}
	return nil
}

// Accepts reports whether Advance(bs) would succeed, without changing m.
func (m *Matcher) Accepts(bs []byte) bool {
	m.maybeCompact()
	cur := m.cur()
	for _, b := range bs {
		if cur = m.st.step(cur, b); cur == deadState {
			return false
		}
	}
	return true
}

// CanEnd reports whether the bytes accepted so far form a complete match.
func (m *Matcher) CanEnd() bool { return m.st.canEnd(m.cur(), m.hist[0]) }

// Reset goes back to the position after pos bytes (0 ≤ pos ≤ Pos()).
func (m *Matcher) Reset(pos int) error {
	if pos < 0 || pos > m.Pos() {
		return fmt.Errorf("grammar: reset to %d, outside [0, %d]", pos, m.Pos())
	}
	m.hist = m.hist[:pos+1]
	return nil
}

// Clone returns an independent copy of m at the same position.
func (m *Matcher) Clone() *Matcher {
	return &Matcher{st: m.st.clone(), hist: append([]int32(nil), m.hist...), compactAt: m.compactAt, compactBy: m.compactBy}
}

func (m *Matcher) maybeCompact() {
	if len(m.st.states) > m.compactAt || m.st.bytes > m.compactBy {
		m.st.compact(m.hist)
		// The sets the history needs stay; wait until as many again are new.
		m.compactAt = max(maxStoreStates, 2*len(m.st.states))
		m.compactBy = max(maxStoreBytes, 2*m.st.bytes)
	}
}
