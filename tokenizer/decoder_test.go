package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// streamDecode feeds ids one at a time and returns the chunks Add returned
// and the Flush tail.
func streamDecode(tok *Tokenizer, prime, ids []int32) (chunks []string, tail string) {
	d := tok.NewDecoder()
	d.Prime(prime)
	for _, id := range ids {
		chunks = append(chunks, d.Add(id))
	}
	return chunks, d.Flush()
}

// checkStream checks the Decoder's invariants on ids: the chunks and the
// tail concatenate to Decode(ids), and when that text is valid UTF-8 every
// chunk is too (no character is split between chunks).
func checkStream(t *testing.T, tok *Tokenizer, ids []int32) {
	t.Helper()
	chunks, tail := streamDecode(tok, nil, ids)
	want := tok.Decode(ids)
	if got := strings.Join(chunks, "") + tail; got != want {
		t.Fatalf("ids %v: streamed %q, Decode %q", ids, got, want)
	}
	if utf8.ValidString(want) {
		for i, c := range chunks {
			if !utf8.ValidString(c) {
				t.Fatalf("ids %v: chunk %d %q is not valid UTF-8", ids, i, c)
			}
		}
	}
}

// TestDecoderMatchesDecode streams the tokens of the golden texts and random
// id sequences (byte tokens, control tokens, spaces, apostrophes) through
// Decoder for vocabs with and without the dummy-prefix space and with and
// without space tidying.
func TestDecoderMatchesDecode(t *testing.T) {
	for _, name := range []string{"llama-spm", "gpt-2", "deepseek-coder"} {
		t.Run(name, func(t *testing.T) {
			tok := ggufTokenizer(t, "llamacpp-vocab/ggml-vocab-"+name+".gguf")
			g := readGolden(t, name)
			for _, x := range g.Texts {
				checkStream(t, tok, x.Special)
			}
			// Random sequences drawn from a small pool of interesting tokens.
			var pool []int32
			for _, s := range []string{" ", "  ", "'", " '", "s", " s", "re", ",", " ,", ".", "?", "!", "x", " the",
				"é", "日本", "👍", "\n", "'m", "ve", "t", "d", " 's"} {
				pool = append(pool, tok.Encode(s, false)...)
			}
			for b := range 256 { // byte tokens, where the vocab has them
				if id, ok := tok.ID(string([]byte{'<', '0', 'x', "0123456789ABCDEF"[b>>4], "0123456789ABCDEF"[b&15], '>'})); ok && b%7 == 0 {
					pool = append(pool, id)
				}
			}
			pool = append(pool, tok.BOS(), tok.EOS())
			r := rand.New(rand.NewPCG(1, 2))
			for range 2000 {
				ids := make([]int32, 1+r.IntN(12))
				for i := range ids {
					ids[i] = pool[r.IntN(len(pool))]
				}
				checkStream(t, tok, ids)
			}
		})
	}
}

// TestDecoderHoldsSplitCharacters checks that a character spelled by byte
// tokens comes out whole, once its last byte arrives.
func TestDecoderHoldsSplitCharacters(t *testing.T) {
	tok := ggufTokenizer(t, "llamacpp-vocab/ggml-vocab-llama-spm.gguf")
	ids := tok.Encode("🦙", false) // ▁ then four byte tokens
	d := tok.NewDecoder()
	var got []string
	for _, id := range ids {
		got = append(got, d.Add(id))
	}
	if tail := d.Flush(); tail != "" {
		t.Errorf("Flush = %q, want nothing left", tail)
	}
	want := make([]string, len(ids))
	want[len(ids)-1] = "🦙"
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("chunks %q, want %q", got, want)
	}
}

// TestDecoderPrime checks continuation decoding after a prompt.
func TestDecoderPrime(t *testing.T) {
	cases := []struct {
		vocab, prompt, gen, want string
	}{
		// SentencePiece: a continuation keeps its leading space (Decode of
		// the generated ids alone would drop it).
		{"llama-spm", "Once upon a time", " there was", " there was"},
		// Space tidying sees the prompt: " ' " loses the space after it.
		{"gpt-2", "x '", " y", "y"},
		{"gpt-2", "Hello", " , world", ", world"},
		// No tidying: text as is.
		{"deepseek-coder", "Hello", " , world", " , world"},
	}
	for _, c := range cases {
		tok := ggufTokenizer(t, "llamacpp-vocab/ggml-vocab-"+c.vocab+".gguf")
		prompt := tok.EncodePrompt(c.prompt)
		gen := tok.Encode(c.gen, false)
		if c.vocab == "llama-spm" { // no dummy prefix inside a continuation
			gen = tok.Encode(strings.TrimPrefix(c.gen, " "), false)
		}
		chunks, tail := streamDecode(tok, prompt, gen)
		if got := strings.Join(chunks, "") + tail; got != c.want {
			t.Errorf("%s: prompt %q + %v: got %q, want %q", c.vocab, c.prompt, gen, got, c.want)
		}
	}
}

// TestCleanSpaces pins llama.cpp's three tidying passes, including the
// byte it zeroes in the second one.
func TestCleanSpaces(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{" ,", ","},
		{"a , b . c ? d ! e", "a, b. c? d! e"},
		{"x ' y", "x'y"},
		{"x ' ' y", "x'' y"},
		{"I 'm he 's we 're they 've", "I'm he's we're they've"},
		{"don 't I 'd you 'll", "don 't I 'd you 'll"},
		{"a 're", "a're"},
		{"a 'r", "a 'r"},
	} {
		b := []byte(c.in)
		if got := string(b[:cleanSpaces(b, nil)]); got != c.want {
			t.Errorf("cleanSpaces(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDecoderPrimeRandom checks, on random prompt/continuation pairs, that
// after Prime(p) the streamed text of g is what Decode(p+g) adds to
// Decode(p), wherever Decode(p) is valid UTF-8 and a prefix of Decode(p+g)
// (node-llama-cpp's definition of continuation text).
func TestDecoderPrimeRandom(t *testing.T) {
	for _, name := range []string{"llama-spm", "gpt-2"} {
		tok := ggufTokenizer(t, "llamacpp-vocab/ggml-vocab-"+name+".gguf")
		var pool []int32
		for _, s := range []string{" ", "  ", "'", " '", "s", " s", "re", ",", " ,", ".", "x", " the", "é", "👍", "\n", "'m", "ve"} {
			pool = append(pool, tok.Encode(s, false)...)
		}
		r := rand.New(rand.NewPCG(3, 4))
		checked := 0
		for range 3000 {
			draw := func() []int32 {
				ids := make([]int32, 1+r.IntN(6))
				for i := range ids {
					ids[i] = pool[r.IntN(len(pool))]
				}
				return ids
			}
			p, g := draw(), draw()
			dp, dpg := tok.Decode(p), tok.Decode(append(append([]int32{}, p...), g...))
			if !utf8.ValidString(dp) || !strings.HasPrefix(dpg, dp) {
				continue
			}
			checked++
			chunks, tail := streamDecode(tok, p, g)
			if got, want := strings.Join(chunks, "")+tail, dpg[len(dp):]; got != want {
				t.Fatalf("%s: prompt %v gen %v: got %q, want %q", name, p, g, got, want)
			}
		}
		if checked < 500 {
			t.Errorf("%s: only %d cases checked", name, checked)
		}
	}
}

// TestDecoderLatency checks that tidying holds back only what it must: a
// contraction inside a word is returned at once, a trailing space waits.
func TestDecoderLatency(t *testing.T) {
	tok := ggufTokenizer(t, "llamacpp-vocab/ggml-vocab-gpt-2.gguf")
	d := tok.NewDecoder()
	var got []string
	for _, s := range []string{"I", "'m", " here", " ", ","} {
		ids := tok.Encode(s, false)
		if len(ids) != 1 {
			t.Fatalf("%q is %d tokens", s, len(ids))
		}
		got = append(got, d.Add(ids[0]))
	}
	got = append(got, d.Flush())
	want := []string{"I", "'m", " here", "", ",", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("chunks %q, want %q", got, want)
	}
}
