package tokenizer

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkEncodeDecode checks the properties every input must keep: ids in
// range; the streaming decoder agrees with Decode; and, where llama.cpp's
// own round trip holds, Decode(Encode(text)) == text.
func checkEncodeDecode(t *testing.T, tok *Tokenizer, text string, roundTrip bool) {
	ids := tok.Encode(text, false)
	for _, id := range ids {
		if id < 0 || int(id) >= tok.Size() {
			t.Fatalf("Encode(%q) gave id %d out of range", text, id)
		}
	}
	for _, id := range tok.Encode(text, true) {
		if id < 0 || int(id) >= tok.Size() {
			t.Fatalf("Encode(%q, true) gave id %d out of range", text, id)
		}
	}
	dec := tok.Decode(ids)
	if roundTrip && dec != text {
		t.Fatalf("Decode(Encode(%q)) = %q (ids %v)", text, dec, ids)
	}
	chunks, tail := streamDecode(tok, nil, ids)
	if got := strings.Join(chunks, "") + tail; got != dec {
		t.Fatalf("streamed %q, Decode %q (ids %v)", got, dec, ids)
	}
}

// FuzzEncodeDecode round-trips text through a SentencePiece vocab and a
// byte-level BPE vocab without space tidying, and streams the tokens of a
// vocab with tidying. As in llama.cpp, the round
// trip holds for valid UTF-8 only (SPM: an invalid lead byte swallows the
// bytes after it, "▁" of an escaped space included; BPE: invalid bytes
// become U+FFFD), and SPM decodes a literal U+2581 as a space.
func FuzzEncodeDecode(f *testing.F) {
	for _, s := range []string{"", " ", "Hello world", " Hello", "\n\n \t x", "<s>a</s>", "don't 's 're",
		"日本語 👍🏽 ½", "\xff\xfe", "a\u2581b", "ǅ\u0301", "1234567", "   \n  ", "\r\n"} {
		f.Add(s)
	}
	spm := ggufTokenizer(f, "llamacpp-vocab/ggml-vocab-llama-spm.gguf")
	bpe := ggufTokenizer(f, "llamacpp-vocab/ggml-vocab-deepseek-coder.gguf")
	tidy := ggufTokenizer(f, "llamacpp-vocab/ggml-vocab-gpt-2.gguf") // Decode tidies spaces: no round trip
	f.Fuzz(func(t *testing.T, text string) {
		checkEncodeDecode(t, spm, text, utf8.ValidString(text) && !strings.Contains(text, spaceMark))
		checkEncodeDecode(t, bpe, text, utf8.ValidString(text))
		checkEncodeDecode(t, tidy, text, false)
	})
}

// useVocab runs a parsed vocabulary through New, Encode and Decode: bad
// vocabularies must fail with an error, never a panic.
func useVocab(t *testing.T, v *Vocab) {
	if err := v.Validate(); err != nil {
		t.Fatalf("a loader returned a vocab that does not validate: %v", err)
	}
	tok, err := New(v)
	if err != nil {
		return // e.g. an unsupported pre-tokenizer
	}
	for _, s := range []string{"hello world", " a\n\tb ", "日本 👍", "<s>x</s>"} {
		checkEncodeDecode(t, tok, s, false)
	}
}

// FuzzParseSentencePiece feeds arbitrary bytes to the .model reader.
func FuzzParseSentencePiece(f *testing.F) {
	f.Add(spmModelProto(true, -1, []spPieceSpec{{"<unk>", 0, 2}, {"<s>", 0, 3}, {"</s>", 0, 3}, {"▁a", -1, 1}, {"b", -2, 1}, {"<0x41>", 0, 6}}))
	f.Add(spmModelProto(false, 0, []spPieceSpec{{"x", 0, 1}}))
	f.Add([]byte{0x0a, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseSentencePiece(data)
		if err == nil {
			useVocab(t, v)
		}
	})
}

// FuzzParseTikToken feeds arbitrary bytes to the tiktoken reader.
func FuzzParseTikToken(f *testing.F) {
	f.Add([]byte("YQ== 0\nYg== 1\nYWI= 2\nIA== 3\nIGE= 4\n"))
	f.Add([]byte("YQ== 1\n"))
	f.Add([]byte("!!! 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseTikToken(data)
		if err == nil {
			useVocab(t, v)
		}
	})
}

// FuzzParseGPT2 feeds arbitrary bytes to the vocab.json + merges.txt reader.
func FuzzParseGPT2(f *testing.F) {
	f.Add([]byte(`{"a":0,"b":1,"ab":2,"Ġ":3,"Ġa":4}`), []byte("#version: 0.2\na b\nĠ a\n"))
	f.Add([]byte(`{"a":2}`), []byte("a b c\n"))
	f.Add([]byte(`[]`), []byte(""))
	f.Fuzz(func(t *testing.T, vocab, merges []byte) {
		v, err := ParseGPT2(vocab, merges)
		if err == nil {
			useVocab(t, v)
		}
	})
}

// spPieceSpec is one SentencePiece piece for spmModelProto.
type spPieceSpec struct {
	piece string
	score float32
	typ   int
}

// spmModelProto encodes a minimal SentencePiece ModelProto (test helper).
func spmModelProto(dummyPrefix bool, padID int32, pieces []spPieceSpec) []byte {
	field := func(dst []byte, num, wire int) []byte { return binary.AppendUvarint(dst, uint64(num<<3|wire)) }
	bytesField := func(dst []byte, num int, b []byte) []byte {
		dst = field(dst, num, wireBytes)
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	}
	var out []byte
	for _, p := range pieces {
		var m []byte
		m = bytesField(m, spPiece, []byte(p.piece))
		m = field(m, spScore, wireFixed32)
		m = binary.LittleEndian.AppendUint32(m, math.Float32bits(p.score))
		m = field(m, spType, wireVarint)
		m = binary.AppendUvarint(m, uint64(p.typ))
		out = bytesField(out, spPieces, m)
	}
	var trainer []byte
	trainer = field(trainer, spPadID, wireVarint)
	trainer = binary.AppendUvarint(trainer, uint64(int64(padID))) // negative ids are 10-byte varints
	out = bytesField(out, spTrainerSpec, trainer)
	var norm []byte
	norm = field(norm, spAddDummyPrefix, wireVarint)
	if dummyPrefix {
		norm = binary.AppendUvarint(norm, 1)
	} else {
		norm = binary.AppendUvarint(norm, 0)
	}
	return bytesField(out, spNormalizerSpec, norm)
}
