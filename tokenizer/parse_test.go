package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSentencePiece(t *testing.T) {
	data := spmModelProto(false, -1, []spPieceSpec{{"<unk>", 0, 2}, {"<s>", 0, 3}, {"</s>", 0, 3}, {"▁a", -1.5, 1}, {"<0x41>", 0, 6}, {"<x>", 0, 4}})
	v, err := ParseSentencePiece(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"<unk>", "<s>", "</s>", "▁a", "<0x41>", "<x>"}; !slices.Equal(v.Tokens, want) {
		t.Errorf("tokens %q, want %q", v.Tokens, want)
	}
	if want := []float32{0, 0, 0, -1.5, 0, 0}; !slices.Equal(v.Scores, want) {
		t.Errorf("scores %v, want %v", v.Scores, want)
	}
	if want := []TokenType{TypeUnknown, TypeControl, TypeControl, TypeNormal, TypeByte, TypeUserDefined}; !slices.Equal(v.Types, want) {
		t.Errorf("types %v, want %v", v.Types, want)
	}
	if v.UNK != 0 || v.BOS != 1 || v.EOS != 2 || v.PAD != -1 || v.AddSpacePrefix || !v.AddBOS {
		t.Errorf("UNK %d BOS %d EOS %d PAD %d prefix %v addBOS %v", v.UNK, v.BOS, v.EOS, v.PAD, v.AddSpacePrefix, v.AddBOS)
	}
	// Every truncation is an error or a smaller valid model, never a panic.
	for n := range len(data) {
		if v, err := ParseSentencePiece(data[:n]); err == nil {
			if err := v.Validate(); err != nil {
				t.Fatalf("prefix %d: invalid vocab without error: %v", n, err)
			}
		}
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no pieces"},
		{"group wire type", []byte{0x0b}, "wire type"},
		{"field 0", []byte{0x02, 0x00}, "field number"},
		{"length past end", []byte{0x0a, 0x05, 0x0a}, "bad length"},
		{"duplicate piece", spmModelProto(true, -1, []spPieceSpec{{"a", 0, 1}, {"a", 0, 1}}), "twice"},
	} {
		if _, err := ParseSentencePiece(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

func TestParseTikToken(t *testing.T) {
	// a b ab " " " a" " ab"
	v, err := ParseTikToken([]byte("YQ== 0\nYg== 1\nYWI= 2\nIA== 3\nIGE= 4\nIGFi 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "ab", "Ġ", "Ġa", "Ġab"}; !slices.Equal(v.Tokens, want) {
		t.Errorf("tokens %q, want %q", v.Tokens, want)
	}
	// " ab" splits as " a"+"b" and " "+"ab": both listed, by the ranks of their parts.
	if want := []string{"a b", "Ġ a", "Ġ ab", "Ġa b"}; !slices.Equal(v.Merges, want) {
		t.Errorf("merges %q, want %q", v.Merges, want)
	}
	for _, c := range []struct{ data, want string }{
		{"", "no tokens"},
		{"YQ==\n", "base64 rank"},
		{"!!! 0\n", "base64"},
		{"YQ== x\n", "bad rank"},
		{"YQ== 0\nYQ== 1\n", "twice"},
		{"YQ== 0\nYg== 0\n", "used twice"},
		{"YQ== 1\n", "skip 0"},
	} {
		if _, err := ParseTikToken([]byte(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want one mentioning %q", c.data, err, c.want)
		}
	}
}

func TestParseGPT2(t *testing.T) {
	v, err := ParseGPT2([]byte(`{"a":0,"b":1,"ab":3}`), []byte("#version: 0.2\r\na b\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "[PAD2]", "ab"}; !slices.Equal(v.Tokens, want) {
		t.Errorf("tokens %q, want %q", v.Tokens, want)
	}
	if v.Types[2] != TypeUnused || v.Types[3] != TypeNormal {
		t.Errorf("types %v", v.Types)
	}
	if want := []string{"a b"}; !slices.Equal(v.Merges, want) {
		t.Errorf("merges %q, want %q", v.Merges, want)
	}
	for _, c := range []struct{ vocab, merges, want string }{
		{`{}`, "", "no tokens"},
		{`{"a":-1}`, "", "out of range"},
		{`{"a":0,"b":0}`, "", "used by"},
		{`{"":0}`, "", "empty token"},
		{`[1]`, "", "vocab.json"},
		{`{"a":0}`, "a\n", "not \"left right\""},
		{`{"a":0}`, "a b c\n", "not \"left right\""},
	} {
		if _, err := ParseGPT2([]byte(c.vocab), []byte(c.merges)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s + %q: err %v, want one mentioning %q", c.vocab, c.merges, err, c.want)
		}
	}
}
