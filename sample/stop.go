package sample

import "strings"

// StopMatcher finds stop strings in streamed text. Text arrives in pieces
// (one per token, as the detokenizer produces them); a stop may straddle any
// number of pieces. Push returns the text that can safely be shown: it holds
// back the longest tail that is still the beginning of some stop, and
// releases it as soon as the next piece rules the stop out.
//
//	seen so far:  "... emitted ... | held |"    held = longest suffix that is a proper prefix of a stop
//	Push(piece):  search held+piece for the earliest stop; emit up to it (stop) or up to the new held tail
//
// Matching is on bytes. With valid UTF-8 input and stops the emitted text
// is valid UTF-8: a match, or a prefix of one, always begins on a character
// boundary because it begins with the stop's first (leading) byte.
type StopMatcher struct {
	stops   []string
	buf     []byte // held-back text; len < longest stop
	stopped bool
	matched string
}

// NewStopMatcher returns a matcher for stops; empty strings are ignored
// (Params.Validate rejects them).
func NewStopMatcher(stops []string) *StopMatcher {
	m := &StopMatcher{}
	for _, s := range stops {
		if s != "" {
			m.stops = append(m.stops, s)
		}
	}
	return m
}

// Push consumes the next piece of generated text and returns what may be
// emitted now. When a stop string is found, emit is the text before it,
// stopped is true, and later calls return ("", true): text after the stop,
// including the stop itself, is never emitted. Where several stops match,
// the one starting earliest wins (then the longest).
func (m *StopMatcher) Push(piece string) (emit string, stopped bool) {
	if m.stopped {
		return "", true
	}
	if len(m.stops) == 0 {
		return piece, false
	}
	m.buf = append(m.buf, piece...)
	text := string(m.buf)
	at, which := -1, ""
	for _, s := range m.stops {
		i := strings.Index(text, s)
		if i < 0 {
			continue
		}
		if at < 0 || i < at || (i == at && len(s) > len(which)) {
			at, which = i, s
		}
	}
	if at >= 0 {
		m.stopped, m.matched = true, which
		m.buf = m.buf[:0]
		return text[:at], true
	}
	keep := m.heldTail(text)
	emit = text[:len(text)-keep]
	m.buf = append(m.buf[:0], text[len(text)-keep:]...)
	return emit, false
}

// heldTail returns the length of the longest suffix of text that is a
// proper prefix of some stop (a full stop would have been found already).
func (m *StopMatcher) heldTail(text string) int {
	best := 0
	for _, s := range m.stops {
		n := min(len(s)-1, len(text))
		for ; n > best; n-- {
			if strings.HasSuffix(text, s[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

// Flush returns the held-back text at the end of generation (finished for
// another reason: the text can no longer become a stop).
func (m *StopMatcher) Flush() string {
	if m.stopped {
		return ""
	}
	out := string(m.buf)
	m.buf = m.buf[:0]
	return out
}

// Matched returns the stop string that ended the text, or "" if none has.
func (m *StopMatcher) Matched() string { return m.matched }

// Stopped reports whether a stop string has been found.
func (m *StopMatcher) Stopped() bool { return m.stopped }
