package grammar

import "unicode/utf8"

// byteRange is the closed byte range [lo, hi].
type byteRange struct{ lo, hi byte }

// utf8Sequences calls emit with the byte-range sequences whose
// concatenations are exactly the UTF-8 encodings of the code points in
// [lo, hi] (surrogates must not be in the range). Each sequence has 1 to 4
// ranges; the sequences are disjoint. This is the usual split (as in RE2 and
// Rust's regex-syntax): first by encoded length, then until each byte
// position of the range varies independently.
func utf8Sequences(lo, hi rune, emit func([]byteRange)) {
	bounds := [...]rune{0x7F, 0x7FF, 0xFFFF, utf8.MaxRune}
	for _, b := range bounds {
		if lo > hi {
			return
		}
		if lo <= b {
			top := min(hi, b)
			splitSameLength(lo, top, emit)
			lo = top + 1
		}
	}
}

func splitSameLength(lo, hi rune, emit func([]byteRange)) {
	n := utf8.RuneLen(lo)
	for i := 1; i < n; i++ {
		m := rune(1)<<(6*i) - 1 // the low 6*i bits: the last i continuation bytes
		if lo&^m != hi&^m {
			if lo&m != 0 {
				splitSameLength(lo, lo|m, emit)
				splitSameLength((lo|m)+1, hi, emit)
				return
			}
			if hi&m != m {
				splitSameLength(lo, (hi&^m)-1, emit)
				splitSameLength(hi&^m, hi, emit)
				return
			}
		}
	}
	var a, b [4]byte
	utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(b[:], hi)
	seq := make([]byteRange, n)
	for i := range n {
		seq[i] = byteRange{a[i], b[i]}
	}
	emit(seq)
}
