package grammar

import (
	"slices"
	"unicode/utf8"
)

// RuneRange is the closed range of code points [Lo, Hi].
type RuneRange struct{ Lo, Hi rune }

// Surrogates (U+D800..U+DFFF) have no UTF-8 encoding; classes never hold them.
const (
	surrLo = 0xD800
	surrHi = 0xDFFF
)

// NewClass normalizes ranges: clipped to [0, U+10FFFF] less the surrogates,
// sorted, overlapping and adjacent ranges merged, empty ranges dropped.
func NewClass(rs ...RuneRange) []RuneRange {
	var in []RuneRange
	for _, r := range rs {
		lo, hi := max(r.Lo, 0), min(r.Hi, utf8.MaxRune)
		if lo > hi {
			continue
		}
		// Cut out the surrogates.
		if lo <= surrHi && hi >= surrLo {
			if lo < surrLo {
				in = append(in, RuneRange{lo, surrLo - 1})
			}
			if hi > surrHi {
				in = append(in, RuneRange{surrHi + 1, hi})
			}
			continue
		}
		in = append(in, RuneRange{lo, hi})
	}
	slices.SortFunc(in, func(a, b RuneRange) int { return int(a.Lo - b.Lo) })
	var out []RuneRange
	for _, r := range in {
		if n := len(out); n > 0 && r.Lo <= out[n-1].Hi+1 {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	// Ranges that touch only across the surrogate gap stay separate; that is
	// still normalized (classNormalized allows it).
	return out
}

// classNormalized reports whether rs is as NewClass returns it.
func classNormalized(rs []RuneRange) bool {
	for i, r := range rs {
		if r.Lo < 0 || r.Hi > utf8.MaxRune || r.Lo > r.Hi || (r.Lo <= surrHi && r.Hi >= surrLo) {
			return false
		}
		if i > 0 && r.Lo <= rs[i-1].Hi+1 {
			return false
		}
	}
	return true
}

// NegateClass returns the code points (less the surrogates) not in rs.
func NegateClass(rs []RuneRange) []RuneRange {
	rs = NewClass(rs...)
	var out []RuneRange
	next := rune(0)
	for _, r := range rs {
		if r.Lo > next {
			out = append(out, RuneRange{next, r.Lo - 1})
		}
		next = r.Hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, RuneRange{next, utf8.MaxRune})
	}
	return NewClass(out...)
}

// classMinus returns a less b.
func classMinus(a, b []RuneRange) []RuneRange {
	return intersectClass(a, NegateClass(b))
}

// intersectClass returns the code points in both a and b.
func intersectClass(a, b []RuneRange) []RuneRange {
	a, b = NewClass(a...), NewClass(b...)
	var out []RuneRange
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].Lo, b[j].Lo), min(a[i].Hi, b[j].Hi)
		if lo <= hi {
			out = append(out, RuneRange{lo, hi})
		}
		if a[i].Hi < b[j].Hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// classHas reports whether r is in the normalized class rs.
func classHas(rs []RuneRange, r rune) bool {
	i, found := slices.BinarySearchFunc(rs, r, func(x RuneRange, r rune) int {
		switch {
		case x.Hi < r:
			return -1
		case x.Lo > r:
			return 1
		}
		return 0
	})
	_ = i
	return found
}

// decodeRune decodes the first UTF-8 character of s; r is -1 when s does not
// start with a valid encoding.
func decodeRune(s string) (r rune, n int) {
	r, n = utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n <= 1 {
		return -1, 1
	}
	return r, n
}
