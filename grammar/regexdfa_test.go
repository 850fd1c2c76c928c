package grammar

import (
	"math/rand/v2"
	"testing"
)

// TestRegexDFA: the automaton of a pattern, its complement, its
// intersection with a length range and the expression given back all
// agree with the grammar kiln builds for the pattern, on random strings.
func TestRegexDFA(t *testing.T) {
	patterns := []string{`^a+$`, `b`, `^(ab|c)*d?$`, `^x-`, `.*\S.*`, `^[A-Za-z](_?[a-z0-9])*$`, `a{2,3}b`, `^$`, `^(a|ab)(c|bcd)(d*)$`}
	alphabet := []rune("abcdx-_ A0")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, pat := range patterns {
		branches, err := parseRegex(pat)
		if err != nil {
			t.Fatal(err)
		}
		g, err := CompileJSONSchema([]byte(`{"type":"string","pattern":`+string(appendJSONString(nil, pat))+`}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		d, err := patternDFA(branches)
		if err != nil {
			t.Fatal(err)
		}
		e, err := d.toExpr()
		if err != nil {
			t.Fatal(err)
		}
		back, err := exprDFA(e)
		if err != nil {
			t.Fatal(err)
		}
		comp := d.complement()
		ld, _ := lengthDFA(2, 4)
		both, err := intersect(d, ld)
		if err != nil {
			t.Fatal(err)
		}
		be, err := both.toExpr()
		if err != nil {
			t.Fatal(err)
		}
		bothBack, err := exprDFA(be)
		if err != nil {
			t.Fatal(err)
		}
		for range 400 {
			n := rng.IntN(7)
			rs := make([]rune, n)
			for i := range rs {
				rs[i] = alphabet[rng.IntN(len(alphabet))]
			}
			s := string(rs)
			_, want := acceptedText(p, jStr(s), 1)
			if got := d.matches(s); got != want {
				t.Fatalf("%s on %q: dfa %v, grammar %v", pat, s, got, want)
			}
			if back.matches(s) != want {
				t.Fatalf("%s on %q: expression given back disagrees (%v)", pat, s, want)
			}
			if comp.matches(s) == want {
				t.Fatalf("%s on %q: complement agrees with the pattern", pat, s)
			}
			inLen := n >= 2 && n <= 4
			if both.matches(s) != (want && inLen) || bothBack.matches(s) != (want && inLen) {
				t.Fatalf("%s on %q: length intersection wrong", pat, s)
			}
		}
	}
}
