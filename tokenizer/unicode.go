package tokenizer

import (
	"sync"
	"unicode"
)

// Code point classes as llama.cpp's unicode.cpp sees them (unicode_cpt_flags).
// The low byte is the general category, exactly one bit per assigned code
// point; flagWhitespace is added on top for the White_Space set.
//
// The pre-tokenizers compare whole flag words (an out-of-range lookup is 0,
// which differs from flagUndefined), so the bit layout follows llama.cpp's.
const (
	flagUndefined  uint16 = 1 << 0 // unassigned (Cn) and > U+10FFFF
	flagNumber     uint16 = 1 << 1 // \p{N}
	flagLetter     uint16 = 1 << 2 // \p{L}
	flagSeparator  uint16 = 1 << 3 // \p{Z}
	flagMark       uint16 = 1 << 4 // \p{M}
	flagPunct      uint16 = 1 << 5 // \p{P}
	flagSymbol     uint16 = 1 << 6 // \p{S}
	flagControl    uint16 = 1 << 7 // \p{C} other than Cn
	flagCategories uint16 = 0xFF
	flagWhitespace uint16 = 1 << 8 // \s in llama.cpp's custom splitters
)

// maxCodepoint bounds the category table, as MAX_CODEPOINTS in llama.cpp.
const maxCodepoint = 0x110000

var (
	categoryOnce  sync.Once
	categoryTable []uint8 // [maxCodepoint] low byte of the flags per code point
)

// buildCategories fills categoryTable from Go's Unicode tables (Unicode
// 15.0.0 in Go 1.26). llama.cpp's table (unicode-data.cpp) is generated from
// Unicode 15.1, which differs from 15.0 by 627 newly assigned code points;
// they are patched in below so that every code point gets llama.cpp's class
// (checked once against unicode-data.cpp over all 0x110000 code points).
func buildCategories() {
	t := make([]uint8, maxCodepoint)
	for i := range t {
		t[i] = uint8(flagUndefined)
	}
	set := func(tab *unicode.RangeTable, f uint16) {
		for _, r := range tab.R16 {
			for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
				t[c] = uint8(f)
			}
		}
		for _, r := range tab.R32 {
			for c := r.Lo; c <= r.Hi; c += r.Stride {
				t[c] = uint8(f)
			}
		}
	}
	// \p{C} without Cn: Go's unicode.C also covers unassigned code points,
	// which llama.cpp classes as undefined.
	for _, tab := range []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs} {
		set(tab, flagControl)
	}
	set(unicode.S, flagSymbol)
	set(unicode.P, flagPunct)
	set(unicode.M, flagMark)
	set(unicode.Z, flagSeparator)
	set(unicode.L, flagLetter)
	set(unicode.N, flagNumber)
	// Unicode 15.1 additions: IDEOGRAPHIC DESCRIPTION CHARACTERs (So) and
	// CJK Unified Ideographs Extension I (Lo).
	patch := func(lo, hi uint32, f uint16) {
		for c := lo; c <= hi; c++ {
			if t[c] == uint8(flagUndefined) {
				t[c] = uint8(f)
			}
		}
	}
	patch(0x2FFC, 0x2FFF, flagSymbol)
	patch(0x31EF, 0x31EF, flagSymbol)
	patch(0x2EBF0, 0x2EE5D, flagLetter)
	categoryTable = t
}

// isWhitespace reports membership in llama.cpp's unicode_set_whitespace,
// which is Unicode's White_Space property.
func isWhitespace(c uint32) bool {
	switch c {
	case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680,
		0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return c >= 0x2000 && c <= 0x200A
}

// asciiFlags holds the flags of code points below 0x80 (no table build needed
// for plain ASCII text).
var asciiFlags = func() (t [0x80]uint16) {
	for c := range t {
		r := rune(c)
		switch {
		case unicode.IsNumber(r):
			t[c] = flagNumber
		case unicode.IsLetter(r):
			t[c] = flagLetter
		case unicode.In(r, unicode.Z):
			t[c] = flagSeparator
		case unicode.IsPunct(r):
			t[c] = flagPunct
		case unicode.IsSymbol(r):
			t[c] = flagSymbol
		default:
			t[c] = flagControl
		}
		if isWhitespace(uint32(c)) {
			t[c] |= flagWhitespace
		}
	}
	return t
}()

// cptFlags returns llama.cpp's unicode_cpt_flags_from_cpt(c).
func cptFlags(c uint32) uint16 {
	if c < 0x80 {
		return asciiFlags[c]
	}
	if c >= maxCodepoint {
		return flagUndefined
	}
	categoryOnce.Do(buildCategories)
	f := uint16(categoryTable[c])
	if isWhitespace(c) {
		f |= flagWhitespace
	}
	return f
}

// utf8Len is llama.cpp's unicode_len_utf8: the length of a UTF-8 sequence
// judged by its first byte alone (continuation bytes count as length 1).
func utf8Len(b byte) int {
	return int(utf8LenTable[b>>4])
}

var utf8LenTable = [16]uint8{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}

// decodeCpt decodes one code point at s[i:] the way llama.cpp's
// unicode_cpts_from_utf8 does: continuation bytes are checked, but overlong
// forms, surrogates and values above U+10FFFF are accepted; an invalid
// sequence yields U+FFFD and consumes one byte.
func decodeCpt(s string, i int) (c uint32, size int) {
	b0 := s[i]
	switch {
	case b0&0x80 == 0:
		return uint32(b0), 1
	case b0&0x40 == 0:
		return 0xFFFD, 1
	case b0&0x20 == 0:
		if i+1 >= len(s) || s[i+1]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		return uint32(b0&0x1F)<<6 | uint32(s[i+1]&0x3F), 2
	case b0&0x10 == 0:
		if i+2 >= len(s) || s[i+1]&0xC0 != 0x80 || s[i+2]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		return uint32(b0&0x0F)<<12 | uint32(s[i+1]&0x3F)<<6 | uint32(s[i+2]&0x3F), 3
	case b0&0x08 == 0:
		if i+3 >= len(s) || s[i+1]&0xC0 != 0x80 || s[i+2]&0xC0 != 0x80 || s[i+3]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		return uint32(b0&0x07)<<18 | uint32(s[i+1]&0x3F)<<12 | uint32(s[i+2]&0x3F)<<6 | uint32(s[i+3]&0x3F), 4
	}
	return 0xFFFD, 1
}

// appendCpt appends the UTF-8 form of c as llama.cpp's unicode_cpt_to_utf8
// writes it (surrogates are encoded like any other value). llama.cpp throws
// for values above U+10FFFF, which only a malformed 4-byte sequence can
// produce; kiln writes U+FFFD for them instead.
func appendCpt(dst []byte, c uint32) []byte {
	switch {
	case c <= 0x7F:
		return append(dst, byte(c))
	case c <= 0x7FF:
		return append(dst, 0xC0|byte(c>>6), 0x80|byte(c&0x3F))
	case c <= 0xFFFF:
		return append(dst, 0xE0|byte(c>>12), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	case c <= 0x10FFFF:
		return append(dst, 0xF0|byte(c>>18), 0x80|byte(c>>12&0x3F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	}
	return append(dst, 0xEF, 0xBF, 0xBD)
}
