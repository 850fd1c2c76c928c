package grammar

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// synthVocab returns a vocabulary with every single byte, some words made of
// the given alphabet, and one EOG token at the end.
func synthVocab(t testing.TB, rng *rand.Rand, alphabet string, words int) *Vocabulary {
	t.Helper()
	var toks [][]byte
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	for range words {
		n := 1 + rng.IntN(6)
		w := make([]byte, n)
		for i := range w {
			w[i] = alphabet[rng.IntN(len(alphabet))]
		}
		toks = append(toks, w)
	}
	toks = append(toks, nil, []byte("<ctl>")) // a non-text token with no bytes, then EOG
	v, err := NewVocabulary(toks, []int32{int32(len(toks) - 1)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkMask compares FillMask with Allows and with a byte-by-byte check of
// every token on ref, a byte matcher with its own store, at the same text.
func checkMask(t *testing.T, tm *TokenMatcher, ref *Matcher, mask []uint64) {
	t.Helper()
	tm.FillMask(mask)
	v := tm.idx.vocab
	for id := range int32(v.Size()) {
		want := false
		switch {
		case tm.Ended():
		case v.eog[id]:
			want = tm.m.CanEnd()
		case v.bytes[id] != nil:
			pos := ref.Pos()
			want = ref.Advance(v.bytes[id]) == nil
			if err := ref.Reset(pos); err != nil {
				t.Fatal(err)
			}
		}
		if got := MaskHas(mask, id); got != want {
			t.Fatalf("after %d bytes, token %d %q: mask %v, brute force %v", tm.Bytes(), id, v.bytes[id], got, want)
		}
		if got := tm.Allows(id); got != want {
			t.Fatalf("after %d bytes, token %d %q: Allows %v, brute force %v", tm.Bytes(), id, v.bytes[id], got, want)
		}
	}
}

func TestMaskMatchesBruteForce(t *testing.T) {
	grammars := []struct{ src, alphabet string }{
		{`root ::= "{" ws ( pair ( "," ws pair )* )? ws "}"
pair ::= str ws ":" ws val
val ::= str | num | root | "[" ws ( val ( "," ws val )* )? ws "]"
str ::= "\"" [^"\\]* "\""
num ::= "-"? [0-9]+
ws ::= [ ]?`, `{}[]",:ab -019`},
		{`root ::= "(" root ")" root | ""`, "()x"},
		{`root ::= ("ab" | "a" "b"?)* "c"`, "abc"},
		{`root ::= [^x]* "x" [a-c]{2,4}`, "abcxé"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, g := range grammars {
		gr, err := ParseGBNF(g.src)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(gr)
		if err != nil {
			t.Fatal(err)
		}
		v := synthVocab(t, rng, g.alphabet, 300)
		x, err := NewTokenIndex(p, v)
		if err != nil {
			t.Fatal(err)
		}
		mask := make([]uint64, MaskWords(v.Size()))
		for run := range 20 {
			tm, err := x.NewTokenMatcher()
			if err != nil {
				t.Fatal(err)
			}
			var text []byte
			for step := 0; step < 40 && !tm.Ended(); step++ {
				ref, err := NewMatcher(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := ref.Advance(text); err != nil {
					t.Fatal(err)
				}
				checkMask(t, tm, ref, mask)
				var allowed []int32
				for id := range int32(v.Size()) {
					if MaskHas(mask, id) {
						allowed = append(allowed, id)
					}
				}
				if len(allowed) == 0 {
					t.Fatalf("%q run %d: dead end after %d bytes", g.src, run, tm.Bytes())
				}
				id := allowed[rng.IntN(len(allowed))]
				if err := tm.AcceptToken(id); err != nil {
					t.Fatal(err)
				}
				text = append(text, v.bytes[id]...)
				if rng.IntN(8) == 0 && tm.Tokens() > 1 {
					if err := tm.Rollback(1 + rng.IntN(tm.Tokens())); err != nil {
						t.Fatal(err)
					}
					text = text[:tm.Bytes()]
				}
			}
		}
		t.Logf("%s", x)
	}
}

// TestIndexConcurrent shares one index between matchers on several
// goroutines (run with -race).
func TestIndexConcurrent(t *testing.T) {
	g, err := CompileJSONSchema([]byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"integer"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	v := synthVocab(t, rand.New(rand.NewPCG(5, 6)), `{}[]",:ab -019`, 400)
	x, err := NewTokenIndex(p, v)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for w := range 4 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			tm, err := x.NewTokenMatcher()
			if err != nil {
				done <- err
				return
			}
			mask := make([]uint64, MaskWords(v.Size()))
			for step := 0; step < 60 && !tm.Ended(); step++ {
				tm.FillMask(mask)
				var allowed []int32
				for id := range int32(v.Size()) {
					if MaskHas(mask, id) {
						allowed = append(allowed, id)
					}
				}
				if len(allowed) == 0 {
					done <- fmt.Errorf("dead end")
					return
				}
				if err := tm.AcceptToken(allowed[rng.IntN(len(allowed))]); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
