package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Tests on small hand-made vocabularies: they need no shared files, so they
// run anywhere.

// tinySPM is a SentencePiece vocab: <unk> <s> </s>, 256 byte tokens, then
// pieces with scores.
func tinySPM(t *testing.T, pieces map[string]float32, extra ...specialToken) *Tokenizer {
	t.Helper()
	v := NewVocab(ModelSPM)
	v.Tokens = []string{"<unk>", "<s>", "</s>"}
	v.Types = []TokenType{TypeUnknown, TypeControl, TypeControl}
	v.UNK, v.BOS, v.EOS = 0, 1, 2
	for b := range 256 {
		v.Tokens = append(v.Tokens, fmt.Sprintf("<0x%02X>", b))
		v.Types = append(v.Types, TypeByte)
	}
	names := make([]string, 0, len(pieces))
	for p := range pieces {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		v.Tokens = append(v.Tokens, p)
		v.Types = append(v.Types, TypeNormal)
	}
	for _, s := range extra {
		v.Tokens = append(v.Tokens, s.text)
		v.Types = append(v.Types, s.typ)
	}
	v.Scores = make([]float32, len(v.Tokens))
	for i, tok := range v.Tokens {
		v.Scores[i] = pieces[tok]
	}
	return mustNew(t, v)
}

// texts renders ids as token texts for readable failures.
func texts(tok *Tokenizer, ids []int32) []string {
	var s []string
	for _, id := range ids {
		s = append(s, tok.Vocab().Tokens[id])
	}
	return s
}

func TestSPMSynthetic(t *testing.T) {
	tok := tinySPM(t, map[string]float32{
		"▁": -1, "a": -1, "b": -1, "c": -1, "▁a": -2, "ab": -3, "bc": -0.5, "▁ab": -4, "abc": -9,
	}, specialToken{"<x>", TypeUserDefined}, specialToken{"<ctl>", TypeControl})
	for _, c := range []struct {
		text    string
		special bool
		want    []string
	}{
		{"", false, nil},
		{"a", false, []string{"▁a"}},
		// "bc" (-0.5) beats "▁a" (-2): ▁ a bc, then ▁a bc; "▁abc" is no token.
		{"abc", false, []string{"▁a", "bc"}},
		{"ab", false, []string{"▁ab"}},
		// no dummy prefix for the second word; "d" falls back to its byte.
		{"ab d", false, []string{"▁ab", "▁", "<0x64>"}},
		// user-defined tokens split out even without parsing specials; the
		// text after a special token gets the dummy-prefix space again.
		{"a<x>b", false, []string{"▁a", "<x>", "▁", "b"}},
		{"a<ctl>b", false, []string{"▁a", "<0x3C>", "c", "<0x74>", "<0x6C>", "<0x3E>", "b"}},
		{"a<ctl>b", true, []string{"▁a", "<ctl>", "▁", "b"}},
		{"<s>a", true, []string{"<s>", "▁a"}},
		{"é", false, []string{"▁", "<0xC3>", "<0xA9>"}},
	} {
		if got := texts(tok, tok.Encode(c.text, c.special)); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q, %v) = %q, want %q", c.text, c.special, got, c.want)
		}
	}
	if got := texts(tok, tok.EncodePrompt("a")); !slices.Equal(got, []string{"<s>", "▁a"}) {
		t.Errorf("EncodePrompt = %q", got)
	}
	for _, c := range []struct {
		text string
		want string
	}{{"ab d", "ab d"}, {"a<ctl>b", "a<ctl> b"}, {"é", "é"}} {
		if got := tok.Decode(tok.Encode(c.text, true)); got != c.want {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", c.text, got, c.want)
		}
	}
}

// tinyBPE is a byte-level BPE vocab: the 256 byte characters, then merges
// and their results.
func tinyBPE(t *testing.T, pre string, merges []string, extra ...specialToken) *Tokenizer {
	t.Helper()
	v := NewVocab(ModelBPE)
	v.Pre = pre
	for b := range 256 {
		v.Tokens = append(v.Tokens, byteToUTF8[b])
	}
	for _, m := range merges {
		v.Tokens = append(v.Tokens, strings.Replace(m, " ", "", 1))
	}
	v.Merges = merges
	v.Types = make([]TokenType, len(v.Tokens))
	for i := range v.Types {
		v.Types[i] = TypeNormal
	}
	for _, s := range extra {
		v.Tokens = append(v.Tokens, s.text)
		v.Types = append(v.Types, s.typ)
	}
	return mustNew(t, v)
}

func TestBPESynthetic(t *testing.T) {
	tok := tinyBPE(t, "gpt-2", []string{"l l", "h e", "Ġ w", "he ll", "o r", "hell o"},
		specialToken{"<|endoftext|>", TypeControl})
	for _, c := range []struct {
		text    string
		special bool
		want    []string
	}{
		{"hello", false, []string{"hello"}},
		{"hello world", false, []string{"hello", "Ġw", "or", "l", "d"}},
		{"hello  world", false, []string{"hello", "Ġ", "Ġw", "or", "l", "d"}}, // \s+(?!\S)
		{"hello<|endoftext|>", true, []string{"hello", "<|endoftext|>"}},
		{"hello<|endoftext|>", false, []string{"hello", "<", "|", "end", "of", "text", "|", ">"}},
		{"it's", false, []string{"it", "'", "s"}},
	} {
		got := texts(tok, tok.Encode(c.text, c.special))
		// Unmerged bytes come out one per token; join runs of letters for brevity.
		if want := c.want; !slices.Equal(joinLetters(got), joinLetters(want)) {
			t.Errorf("Encode(%q, %v) = %q, want %q", c.text, c.special, got, want)
		}
		if d := tok.Decode(tok.Encode(c.text, c.special)); d != c.text {
			t.Errorf("Decode(Encode(%q)) = %q", c.text, d)
		}
	}
	if _, err := New(&Vocab{Model: ModelBPE, Pre: "no-such-pre", Tokens: []string{"a"}, BOS: -1, EOS: -1, UNK: -1, PAD: -1, SEP: -1,
		EOT: -1, EOM: -1, FIMPre: -1, FIMSuf: -1, FIMMid: -1, FIMPad: -1, FIMRep: -1, FIMSep: -1}); err == nil || !strings.Contains(err.Error(), "pre-tokenizer") {
		t.Errorf("unknown pre-tokenizer: err %v", err)
	}
}

// joinLetters merges adjacent lower-case tokens (so a test can spell an
// unmerged run "end" instead of "e", "n", "d"; merged tokens are checked
// by the cases whose words are merged whole).
func joinLetters(toks []string) []string {
	var out []string
	for _, s := range toks {
		if n := len(out); n > 0 && isLowerRun(s) && isLowerRun(out[n-1]) {
			out[n-1] += s
			continue
		}
		out = append(out, s)
	}
	return out
}

func isLowerRun(s string) bool {
	for _, c := range s {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

func TestVocabValidate(t *testing.T) {
	base := func() *Vocab {
		v := NewVocab(ModelSPM)
		v.Tokens = []string{"<unk>", "<s>", "</s>", "a"}
		v.UNK, v.BOS, v.EOS = 0, 1, 2
		return v
	}
	for _, c := range []struct {
		name string
		edit func(v *Vocab)
		want string
	}{
		{"ok", func(v *Vocab) {}, ""},
		{"model", func(v *Vocab) { v.Model = "bert" }, "unsupported tokenizer model"},
		{"empty", func(v *Vocab) { v.Tokens = nil }, "empty vocabulary"},
		{"scores", func(v *Vocab) { v.Scores = []float32{0} }, "scores"},
		{"types", func(v *Vocab) { v.Types = []TokenType{1} }, "token types"},
		{"bos range", func(v *Vocab) { v.BOS = 4 }, "bos_token_id"},
		{"no bos", func(v *Vocab) { v.BOS = -1 }, "add BOS"},
		{"duplicate", func(v *Vocab) { v.Tokens[3] = "<s>" }, "twice"},
		{"empty texts are distinct", func(v *Vocab) { v.Tokens = append(v.Tokens, "", "") }, ""},
	} {
		v := base()
		c.edit(v)
		err := v.Validate()
		if _, nerr := New(v); (err == nil) != (nerr == nil) {
			t.Errorf("%s: Validate %v but New %v", c.name, err, nerr)
		}
		if (c.want == "" && err != nil) || (c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want))) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

// TestConcurrentEncode encodes from several goroutines at once (run with
// -race): results must match the serial ones.
func TestConcurrentEncode(t *testing.T) {
	tok := tinyBPE(t, "llama-bpe", []string{"l l", "h e", "Ġ w", "he ll", "o r", "hell o"})
	inputs := []string{"hello world", "hello  hello\n\tworld", "ll or he", "日本 hello 123456"}
	want := make([][]int32, len(inputs))
	for i, s := range inputs {
		want[i] = tok.Encode(s, true)
	}
	done := make(chan error)
	for g := range 4 {
		go func() {
			for i := range 200 {
				k := (g + i) % len(inputs)
				if got := tok.Encode(inputs[k], true); !slices.Equal(got, want[k]) {
					done <- fmt.Errorf("goroutine %d: Encode(%q) = %v, want %v", g, inputs[k], got, want[k])
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
