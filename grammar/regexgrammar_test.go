package grammar

import "testing"

func TestRegexGrammar(t *testing.T) {
	for _, c := range []struct {
		re          string
		yes, no     []string
		unsupported bool
	}{
		{re: `[0-9]{3}-[a-z]+`, yes: []string{"123-abc", "000-z"}, no: []string{"12-a", "123-", "123-abc1", ""}},
		{re: `^(yes|no)$`, yes: []string{"yes", "no"}, no: []string{"yesno", "y", "maybe"}},
		{re: `\d+(\.\d{1,2})?`, yes: []string{"7", "3.14", "10.5"}, no: []string{"3.", "3.141", ".5"}},
		{re: `(?=a)a`, unsupported: true},
		{re: `(a`, unsupported: true},
	} {
		g, err := RegexGrammar(c.re)
		if c.unsupported {
			if err == nil {
				t.Errorf("%q compiled; want an error", c.re)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.re, err)
		}
		p, err := Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append(c.yes, c.no...) {
			m, _ := NewMatcher(p)
			ok := m.Advance([]byte(s)) == nil && m.CanEnd()
			want := false
			for _, y := range c.yes {
				want = want || y == s
			}
			if ok != want {
				t.Errorf("%q on %q: matched %v, want %v", c.re, s, ok, want)
			}
		}
	}
}
