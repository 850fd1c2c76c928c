package tokenizer

import "testing"

// TestCptFlags spot-checks code point classes against llama.cpp's table
// (unicode-data.cpp, Unicode 15.1). The whole table was compared once, all
// 0x110000 code points: Go's Unicode 15.0 tables plus the 15.1 patch in
// buildCategories match it exactly.
func TestCptFlags(t *testing.T) {
	for _, c := range []struct {
		cpt  uint32
		want uint16
	}{
		{'a', flagLetter}, {'Z', flagLetter}, {'7', flagNumber}, {' ', flagSeparator | flagWhitespace},
		{'\t', flagControl | flagWhitespace}, {'\n', flagControl | flagWhitespace}, {0x1F, flagControl},
		{'$', flagSymbol}, {'_', flagPunct}, {'`', flagSymbol}, {'~', flagSymbol}, {0x7F, flagControl},
		{0x85, flagControl | flagWhitespace}, {0xA0, flagSeparator | flagWhitespace}, {0xAD, flagControl},
		{0xB2, flagNumber}, {0xBD, flagNumber}, {0x301, flagMark}, {0x93F, flagMark}, {0x0660, flagNumber},
		{0x2028, flagSeparator | flagWhitespace}, {0x200B, flagControl}, {0x3000, flagSeparator | flagWhitespace},
		{0x4E00, flagLetter}, {0x2160, flagNumber}, {0xFFFD, flagSymbol}, {0xE000, flagControl},
		{0xD800, flagControl}, {0x1F600, flagSymbol}, {0x10FFFF, flagUndefined}, {0x0378, flagUndefined},
		// Unicode 15.1 additions llama.cpp has and Go 1.26's tables lack.
		{0x2FFC, flagSymbol}, {0x31EF, flagSymbol}, {0x2EBF0, flagLetter}, {0x2EE5D, flagLetter}, {0x2EE5E, flagUndefined},
		{maxCodepoint, flagUndefined}, {0xFFFFFFFF, flagUndefined},
	} {
		if got := cptFlags(c.cpt); got != c.want {
			t.Errorf("cptFlags(%#x) = %#x, want %#x", c.cpt, got, c.want)
		}
	}
}

// TestDecodeCpt pins llama.cpp's lax UTF-8 decoding.
func TestDecodeCpt(t *testing.T) {
	for _, c := range []struct {
		in   string
		cpt  uint32
		size int
	}{
		{"a", 'a', 1}, {"é", 0xE9, 2}, {"日", 0x65E5, 3}, {"👍", 0x1F44D, 4},
		{"\x80", 0xFFFD, 1}, {"\xC3", 0xFFFD, 1}, {"\xC3(", 0xFFFD, 1}, {"\xE6\x97", 0xFFFD, 1},
		{"\xC0\x80", 0, 2},                // overlong: accepted
		{"\xED\xA0\x80", 0xD800, 3},       // surrogate: accepted
		{"\xF4\x90\x80\x80", 0x110000, 4}, // above U+10FFFF: accepted
		{"\xF8\x88\x80\x80\x80", 0xFFFD, 1},
	} {
		cpt, size := decodeCpt(c.in, 0)
		if cpt != c.cpt || size != c.size {
			t.Errorf("decodeCpt(%q) = %#x, %d; want %#x, %d", c.in, cpt, size, c.cpt, c.size)
		}
	}
	if got := string(appendCpt(nil, 0x110000)); got != "\uFFFD" {
		t.Errorf("appendCpt(0x110000) = %q", got)
	}
	if got := appendCpt(nil, 0xD800); string(got) != "\xED\xA0\x80" {
		t.Errorf("appendCpt(0xD800) = %q", got)
	}
}

// TestEncodeAllocs checks that encoding into a reused buffer allocates
// nothing once the pooled scratch and word cache are warm.
func TestEncodeAllocs(t *testing.T) {
	if raceDetector {
		t.Skip("allocation counts do not hold under -race (sync.Pool drops items on purpose)")
	}
	text := "Hello world, this is a test of the tokenizer. 日本語 👍 1234567\n\tend"
	for _, name := range []string{"llama-spm", "gpt-2", "deepseek-llm"} {
		tok := ggufTokenizer(t, "llamacpp-vocab/ggml-vocab-"+name+".gguf")
		buf := tok.AppendEncode(nil, text, true)
		if n := testing.AllocsPerRun(50, func() { buf = tok.AppendEncode(buf[:0], text, true) }); n != 0 {
			t.Errorf("%s: %v allocations per Encode", name, n)
		}
	}
}
