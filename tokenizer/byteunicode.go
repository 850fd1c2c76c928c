package tokenizer

// GPT-2's reversible byte ↔ character mapping (bytes_to_unicode): byte-level
// BPE vocabularies spell every byte as one printable character so that token
// texts never hold spaces or control bytes.
//
//	bytes '!'..'~', '¡'..'¬', '®'..'ÿ'  →  the same code point
//	the other 68 bytes (0x00-0x20, 0x7F-0xA0, 0xAD), in order  →  U+0100, U+0101, … U+0143
//
// So ' ' (0x20) is spelled 'Ġ' (U+0120) and '\n' is 'Ċ' (U+010A).
var (
	byteToRune [256]rune    // byte → its character
	byteToUTF8 [256]string  // byte → the UTF-8 text of its character
	runeToByte [0x144]int16 // character → byte, -1 where the character is not part of the mapping
)

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
	}
	for i := range runeToByte {
		runeToByte[i] = -1
	}
	for b, r := range byteToRune {
		byteToUTF8[b] = string(r)
		runeToByte[r] = int16(b)
	}
}

// byteEncode appends the byte-level spelling of raw to dst.
func byteEncode(dst []byte, raw []byte) []byte {
	for _, b := range raw {
		dst = append(dst, byteToUTF8[b]...)
	}
	return dst
}

// byteDecodeToken appends the raw bytes a byte-level token text spells, as
// llama.cpp's llama_decode_text does: a character outside the mapping is
// written as "[UNK_BYTE_0x<its UTF-8 in hex><whole token text>]".
func byteDecodeToken(dst []byte, text string) []byte {
	for i := 0; i < len(text); {
		c, n := decodeCpt(text, i)
		if c < uint32(len(runeToByte)) && runeToByte[c] >= 0 {
			dst = append(dst, byte(runeToByte[c]))
		} else {
			const hex = "0123456789abcdef"
			dst = append(dst, "[UNK_BYTE_0x"...)
			var enc [4]byte
			for _, b := range appendCpt(enc[:0], c) {
				dst = append(dst, hex[b>>4], hex[b&15])
			}
			dst = append(dst, text...)
			dst = append(dst, ']')
		}
		i += n
	}
	return dst
}

// byteEncodeString returns the byte-level spelling of raw.
func byteEncodeString(raw string) string {
	buf := make([]byte, 0, len(raw)*2)
	return string(byteEncode(buf, []byte(raw)))
}

// byteDecodeString inverts byteEncodeString; ok is false when s holds a
// character outside the mapping.
func byteDecodeString(s string) (raw []byte, ok bool) {
	raw = make([]byte, 0, len(s))
	for _, r := range s {
		// U+FFFD (also what invalid UTF-8 decodes to) is outside the mapping.
		if r < 0 || int(r) >= len(runeToByte) || runeToByte[r] < 0 {
			return nil, false
		}
		raw = append(raw, byte(runeToByte[r]))
	}
	return raw, true
}
