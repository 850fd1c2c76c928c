package tokenizer

// The hand-written splitters of llama.cpp's unicode.cpp
// (unicode_regex_split_custom_gpt2 / _llama3 / _qwen2 / _qwen35), transcribed
// step for step: position pos walks a piece c of code points, with flags f;
// looking past the piece gives cpt outOfRange and flags 0 (which differs from
// flagUndefined, the flags of an unassigned code point).

const outOfRange = 0xFFFFFFFF

// cursor gives bounds-checked access to one piece and collects token lengths.
type cursor struct {
	c    []uint32
	f    []uint16
	out  []int32
	prev int // end of the last emitted token
}

func (k *cursor) cpt(pos int) uint32 {
	if pos >= 0 && pos < len(k.c) {
		return k.c[pos]
	}
	return outOfRange
}

func (k *cursor) flags(pos int) uint16 {
	if pos >= 0 && pos < len(k.c) {
		return k.f[pos]
	}
	return 0
}

// emit ends a token at end and returns its length (tokens may be empty:
// they are then not recorded, as in llama.cpp).
func (k *cursor) emit(end int) int {
	n := end - k.prev
	if n > 0 {
		k.out = append(k.out, int32(n))
	}
	k.prev = end
	return n
}

func isLetter(f uint16) bool { return f&flagLetter != 0 }
func isNumber(f uint16) bool { return f&flagNumber != 0 }
func isSpace(f uint16) bool  { return f&flagWhitespace != 0 }
func isMark(f uint16) bool   { return f&flagMark != 0 }

// lowerASCII is llama.cpp's unicode_tolower restricted to what the
// contraction checks need: only A-Z lower-case to a-z letters.
func lowerASCII(c uint32) uint32 {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// contraction returns the length (2 or 3) of 's 't 're 've 'm 'll 'd at pos,
// or 0. fold makes it case-insensitive (Llama 3, Qwen2).
func (k *cursor) contraction(pos int, fold bool) int {
	end := len(k.c)
	if k.cpt(pos) != '\'' || pos+1 >= end {
		return 0
	}
	low := func(c uint32) uint32 {
		if fold {
			return lowerASCII(c)
		}
		return c
	}
	n1 := low(k.cpt(pos + 1))
	if n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd' {
		return 2
	}
	if pos+2 < end {
		n2 := low(k.cpt(pos + 2))
		if (n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l') {
			return 3
		}
	}
	return 0
}

// whitespaceTail handles the shared ending of every custom splitter:
// \s*[\r\n]+ (when withNewlines), \s+(?!\S), \s+, and a single unmatched
// code point. It returns the new position.
func (k *cursor) whitespaceTail(pos int, withNewlines bool) int {
	nws := 0
	lastRN := 0
	for isSpace(k.flags(pos + nws)) {
		if c := k.cpt(pos + nws); c == '\r' || c == '\n' {
			lastRN = pos + nws + 1
		}
		nws++
	}
	if withNewlines && lastRN > 0 { // \s*[\r\n]+
		pos = lastRN
		k.emit(pos)
		return pos
	}
	if nws > 1 && k.cpt(pos+nws) != outOfRange { // \s+(?!\S)
		pos += nws - 1
		k.emit(pos)
		return pos
	}
	if nws > 0 { // \s+
		pos += nws
		k.emit(pos)
		return pos
	}
	pos++ // no match: one code point
	k.emit(pos)
	return pos
}

// splitGPT2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitGPT2(c []uint32, f []uint16, out []int32) []int32 {
	k := cursor{c: c, f: f, out: out}
	for pos := 0; pos < len(c); {
		cpt := k.cpt(pos)
		fl := k.flags(pos)
		if n := k.contraction(pos, false); n > 0 {
			pos += k.emit(pos + n)
			continue
		}
		f2 := fl
		if cpt == ' ' {
			f2 = k.flags(pos + 1)
		}
		if isLetter(f2) { // ' ?\p{L}+'
			if cpt == ' ' {
				pos++
			}
			for isLetter(f2) {
				pos++
				f2 = k.flags(pos)
			}
			k.emit(pos)
			continue
		}
		if isNumber(f2) { // ' ?\p{N}+'
			if cpt == ' ' {
				pos++
			}
			for isNumber(f2) {
				pos++
				f2 = k.flags(pos)
			}
			k.emit(pos)
			continue
		}
		if f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f2 != 0 { // ' ?[^\s\p{L}\p{N}]+'
			if cpt == ' ' {
				pos++
			}
			for f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f2 != 0 {
				pos++
				f2 = k.flags(pos)
			}
			k.emit(pos)
			continue
		}
		pos = k.whitespaceTail(pos, false)
	}
	return k.out
}

// splitLlama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitLlama3(c []uint32, f []uint16, out []int32) []int32 {
	return splitLlama3Like(c, f, out, 3, false)
}

// splitQwen2: as Llama 3 but \p{N} (one digit per token).
func splitQwen2(c []uint32, f []uint16, out []int32) []int32 {
	return splitLlama3Like(c, f, out, 1, false)
}

// splitQwen35: as Qwen2 but letter runs also take marks: [\p{L}\p{M}]+.
func splitQwen35(c []uint32, f []uint16, out []int32) []int32 {
	return splitLlama3Like(c, f, out, 1, true)
}

// splitLlama3Like is the Llama 3 / Qwen2 / Qwen3.5 splitter; maxDigits is
// the length of digit groups and marks makes \p{M} count with letters.
func splitLlama3Like(c []uint32, f []uint16, out []int32, maxDigits int, marks bool) []int32 {
	k := cursor{c: c, f: f, out: out}
	word := func(fl uint16) bool { return isLetter(fl) || (marks && isMark(fl)) }
	for pos := 0; pos < len(c); {
		cpt := k.cpt(pos)
		fl := k.flags(pos)
		if n := k.contraction(pos, true); n > 0 {
			pos += k.emit(pos + n)
			continue
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if !(cpt == '\r' || cpt == '\n' || isNumber(fl)) {
			if word(fl) || word(k.flags(pos+1)) {
				pos++
				for word(k.flags(pos)) {
					pos++
				}
				k.emit(pos)
				continue
			}
		}
		// \p{N}{1,3} (Qwen: \p{N})
		if isNumber(fl) {
			ini := pos
			for isNumber(k.flags(pos)) {
				pos++
				if pos-ini >= maxDigits {
					k.emit(pos)
					ini = pos
				}
			}
			k.emit(pos)
			continue
		}
		// ' ?[^\s\p{L}\p{N}]+[\r\n]*' (llama.cpp tests the first code point's
		// own flags for being non-empty, not those after the space).
		notWord := flagWhitespace | flagLetter | flagNumber
		if marks {
			notWord |= flagMark
		}
		f2 := fl
		if cpt == ' ' {
			f2 = k.flags(pos + 1)
		}
		if f2&notWord == 0 && fl != 0 {
			if cpt == ' ' {
				pos++
			}
			for f2&notWord == 0 && f2 != 0 {
				pos++
				f2 = k.flags(pos)
			}
			for c2 := k.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = k.cpt(pos) {
				pos++
			}
			k.emit(pos)
			continue
		}
		pos = k.whitespaceTail(pos, true)
	}
	return k.out
}
