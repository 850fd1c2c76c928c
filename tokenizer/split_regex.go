package tokenizer

import (
	"cmp"
	"slices"
)

// Pre-tokenizer expressions llama.cpp runs with std::regex (ECMAScript,
// leftmost match, greedy, backtracking). Every match and every stretch of
// text between matches becomes a piece.
//
// An expression with \p{...} categories runs over a "collapsed" text in which
// each code point is one byte: ASCII stays itself, other whitespace becomes
// 0x0B, other code points become a byte for their category (N 0xD1, L 0xD2,
// P 0xD3, M 0xD4, S 0xD5, anything else 0xD0), and \p{N} becomes
// [\xD10-9], \p{L} [\xD2A-Za-z], \p{P} [\xD3!-#%-*,-/:-;?-@\[-\]_{}]. An
// expression without categories runs over the code points themselves, with
// non-ASCII whitespace turned into 0x0B. In both, \s is C's isspace: ASCII
// " \t\n\v\f\r" (so, through 0x0B, all Unicode whitespace).

// reSpace is \s as both forms of llama.cpp's std::regex see it.
func reSpace(c uint32, f uint16) bool {
	if c < 0x80 {
		return isCSpace(byte(c))
	}
	return f&flagWhitespace != 0
}

// collapsedClass is the category byte of a non-ASCII, non-space code point.
func collapsedCategory(f uint16) uint16 { return f & flagCategories }

// reNumber is \p{N} on the collapsed text.
func reNumber(c uint32, f uint16) bool {
	if c < 0x80 {
		return c >= '0' && c <= '9'
	}
	return f&flagWhitespace == 0 && collapsedCategory(f) == flagNumber
}

// reLetter is \p{L} on the collapsed text.
func reLetter(c uint32, f uint16) bool {
	if c < 0x80 {
		return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
	}
	return f&flagWhitespace == 0 && collapsedCategory(f) == flagLetter
}

// asciiPunctP is the ASCII part of the collapsed \p{P}: !-# %-* ,-/ :-; ?-@ [-] _ { }
var asciiPunctP = func() (t [128]bool) {
	for _, r := range [][2]byte{{'!', '#'}, {'%', '*'}, {',', '/'}, {':', ';'}, {'?', '@'}, {'[', ']'}, {'_', '_'}, {'{', '{'}, {'}', '}'}} {
		for c := r[0]; c <= r[1]; c++ {
			t[c] = true
		}
	}
	return t
}()

// rePunct is \p{P} on the collapsed text.
func rePunct(c uint32, f uint16) bool {
	if c < 0x80 {
		return asciiPunctP[c]
	}
	return f&flagWhitespace == 0 && collapsedCategory(f) == flagPunct
}

// rePunctRun is [\p{P}\$\+<=>\^~\|] (default pre-tokenizer).
func rePunctRun(c uint32, f uint16) bool {
	switch c {
	case '$', '+', '<', '=', '>', '^', '~', '|':
		return true
	}
	return rePunct(c, f)
}

// rePunctRunFalcon is [\p{P}\$\+<=>\^~\|`] (Falcon).
func rePunctRunFalcon(c uint32, f uint16) bool {
	return c == '`' || rePunctRun(c, f)
}

// runeRange is an inclusive code point range of a bracket expression.
type runeRange struct{ lo, hi uint32 }

// runeClass is a bracket expression: an ASCII bitmap and sorted, merged
// ranges for the rest (binary search).
type runeClass struct {
	ascii  [2]uint64
	ranges []runeRange
}

func newRuneClass(rs []runeRange) *runeClass {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b runeRange) int { return cmp.Compare(a.lo, b.lo) })
	c := &runeClass{}
	for _, r := range rs {
		for x := r.lo; x <= r.hi && x < 0x80; x++ {
			c.ascii[x>>6] |= 1 << (x & 63)
		}
		if n := len(c.ranges); n > 0 && r.lo <= c.ranges[n-1].hi+1 {
			c.ranges[n-1].hi = max(c.ranges[n-1].hi, r.hi)
		} else {
			c.ranges = append(c.ranges, r)
		}
	}
	return c
}

func (c *runeClass) has(x uint32) bool {
	if x < 0x80 {
		return c.ascii[x>>6]&(1<<(x&63)) != 0
	}
	rs := c.ranges
	i, j := 0, len(rs)
	for i < j {
		h := int(uint(i+j) >> 1)
		if rs[h].hi < x {
			i = h + 1
		} else {
			j = h
		}
	}
	return i < len(rs) && rs[i].lo <= x
}

// Bracket expressions of DeepSeek's pre-tokenizers, over code points
// (non-ASCII whitespace has become 0x0B before they are tested, so it never
// matches them).
var (
	// [一-龥ࠀ-一가-퟿]
	cjkRanges = []runeRange{{0x4E00, 0x9FA5}, {0x800, 0x4E00}, {0xAC00, 0xD7FF}}
	// [!-/:-~！-／：-～‘-‟　-。]
	deepseekPunctRanges = []runeRange{{0x21, 0x2F}, {0x3A, 0x7E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002}}
	// [A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]
	deepseekLatinRanges = []runeRange{
		{0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA}, {0x1BC, 0x1BF},
		{0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377}, {0x37B, 0x37D}, {0x37F, 0x37F},
		{0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C}, {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481},
		{0x48A, 0x52F}, {0x531, 0x556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA},
		{0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
		{0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D},
		{0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC},
		{0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102},
		{0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126},
		{0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
		{0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3},
		{0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF},
		{0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3},
		{0x104D8, 0x104FB}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
	}
)

// wide returns a predicate over code points as llama.cpp's std::wregex sees
// them (non-ASCII whitespace replaced by 0x0B, which no range here holds).
func wide(rs []runeRange) func(uint32, uint16) bool {
	class := newRuneClass(rs)
	return func(c uint32, f uint16) bool {
		return !(c >= 0x80 && f&flagWhitespace != 0) && class.has(c)
	}
}

var (
	reCJK           = wide(cjkRanges)
	reDeepseekPunct = wide(deepseekPunctRanges)
	reDeepseekLatin = wide(deepseekLatinRanges)
)

// splitRuns is [X]+: maximal runs of class members, and the stretches
// between them, each become a piece.
func splitRuns(c []uint32, f []uint16, out []int32, in func(uint32, uint16) bool) []int32 {
	start := 0
	for i := 1; i <= len(c); i++ {
		if i == len(c) || in(c[i], f[i]) != in(c[start], f[start]) {
			out = append(out, int32(i-start))
			start = i
		}
	}
	return out
}

// splitEach is [X]: every class member is a piece of its own.
func splitEach(c []uint32, f []uint16, out []int32, in func(uint32, uint16) bool) []int32 {
	gap := 0
	for i := range c {
		if in(c[i], f[i]) {
			if i > gap {
				out = append(out, int32(i-gap))
			}
			out = append(out, 1)
			gap = i + 1
		}
	}
	if gap < len(c) {
		out = append(out, int32(len(c)-gap))
	}
	return out
}

// splitSpaceRun is \s?[X]+: a run of class members, with the one whitespace
// just before it when there is one.
func splitSpaceRun(c []uint32, f []uint16, out []int32, in func(uint32, uint16) bool) []int32 {
	gap := 0
	for i := 0; i < len(c); {
		var j int
		switch {
		case reSpace(c[i], f[i]) && i+1 < len(c) && in(c[i+1], f[i+1]):
			j = i + 1
		case in(c[i], f[i]):
			j = i
		default:
			i++
			continue
		}
		for j < len(c) && in(c[j], f[j]) {
			j++
		}
		if i > gap {
			out = append(out, int32(i-gap))
		}
		out = append(out, int32(j-i))
		i, gap = j, j
	}
	if gap < len(c) {
		out = append(out, int32(len(c)-gap))
	}
	return out
}

func splitPunctRuns(c []uint32, f []uint16, out []int32) []int32 {
	return splitRuns(c, f, out, rePunctRun)
}

func splitPunctRunsFalcon(c []uint32, f []uint16, out []int32) []int32 {
	return splitRuns(c, f, out, rePunctRunFalcon)
}

// splitNumberRuns is \p{N}+.
func splitNumberRuns(c []uint32, f []uint16, out []int32) []int32 {
	return splitRuns(c, f, out, reNumber)
}

// splitEachNumber is \p{N}.
func splitEachNumber(c []uint32, f []uint16, out []int32) []int32 {
	return splitEach(c, f, out, reNumber)
}

// splitEachNewline is [\r\n].
func splitEachNewline(c []uint32, f []uint16, out []int32) []int32 {
	return splitEach(c, f, out, func(c uint32, _ uint16) bool { return c == '\r' || c == '\n' })
}

// splitDigitTriples is [0-9][0-9][0-9]: from left to right, every three
// consecutive ASCII digits are a piece.
func splitDigitTriples(c []uint32, _ []uint16, out []int32) []int32 {
	digit := func(i int) bool { return i < len(c) && c[i] >= '0' && c[i] <= '9' }
	gap := 0
	for i := 0; i < len(c); {
		if digit(i) && digit(i+1) && digit(i+2) {
			if i > gap {
				out = append(out, int32(i-gap))
			}
			out = append(out, 3)
			i += 3
			gap = i
			continue
		}
		i++
	}
	if gap < len(c) {
		out = append(out, int32(len(c)-gap))
	}
	return out
}

// splitSpaceLetters is \s?\p{L}+ (DeepSeek Coder).
func splitSpaceLetters(c []uint32, f []uint16, out []int32) []int32 {
	return splitSpaceRun(c, f, out, reLetter)
}

// splitSpacePunct is \s?\p{P}+ (DeepSeek Coder).
func splitSpacePunct(c []uint32, f []uint16, out []int32) []int32 {
	return splitSpaceRun(c, f, out, rePunct)
}

// splitCJK is [一-龥ࠀ-一가-퟿]+ (DeepSeek).
func splitCJK(c []uint32, f []uint16, out []int32) []int32 {
	return splitRuns(c, f, out, reCJK)
}

// splitSpaceLatin is \s?[A-Za-zµÀ-Ö...]+ (DeepSeek LLM).
func splitSpaceLatin(c []uint32, f []uint16, out []int32) []int32 {
	return splitSpaceRun(c, f, out, reDeepseekLatin)
}

// splitSpaceASCIIPunct is \s?[!-/:-~！-／：-～‘-‟　-。]+ (DeepSeek LLM).
func splitSpaceASCIIPunct(c []uint32, f []uint16, out []int32) []int32 {
	return splitSpaceRun(c, f, out, reDeepseekPunct)
}

// splitTrailingSpace is \s+$: the whitespace that ends the piece.
func splitTrailingSpace(c []uint32, f []uint16, out []int32) []int32 {
	j := len(c)
	for j > 0 && reSpace(c[j-1], f[j-1]) {
		j--
	}
	if j > 0 {
		out = append(out, int32(j))
	}
	if j < len(c) {
		out = append(out, int32(len(c)-j))
	}
	return out
}
