package tokenizer

import "testing"

// TestRuneClass checks the bitmap and binary search against a plain scan
// of the ranges over the whole code point range.
func TestRuneClass(t *testing.T) {
	for name, rs := range map[string][]runeRange{"cjk": cjkRanges, "punct": deepseekPunctRanges, "latin": deepseekLatinRanges} {
		c := newRuneClass(rs)
		for x := uint32(0); x < maxCodepoint+2; x++ {
			want := false
			for _, r := range rs {
				want = want || (x >= r.lo && x <= r.hi)
			}
			if c.has(x) != want {
				t.Fatalf("%s: has(%#x) = %v, want %v", name, x, !want, want)
			}
		}
	}
}
