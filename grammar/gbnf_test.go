package grammar

import (
	"errors"
	"strings"
	"testing"
)

func mustMatcher(t testing.TB, src string) *Matcher {
	t.Helper()
	g, err := ParseGBNF(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMatcher(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// matches reports whether the whole of s is in the language.
func matches(m *Matcher, s string) bool {
	m = m.Clone()
	return m.Advance([]byte(s)) == nil && m.CanEnd()
}

func TestGBNFLanguages(t *testing.T) {
	cases := []struct {
		src     string
		yes, no []string
	}{
		{`root ::= "a" | "b"`, []string{"a", "b"}, []string{"", "ab", "c"}},
		{`root ::= [a-c]+ "!"?`, []string{"a", "abc!", "cc"}, []string{"", "!", "d", "a!!"}},
		{`root ::= ("ab")* x
x ::= "c"`, []string{"c", "abc", "ababc"}, []string{"ab", "aac", ""}},
		{`root ::= [^"\\]*`, []string{"", "héllo", "日本", "\U0001F600"}, []string{`"`, `\`, "\xff", "\xed\xa0\x80"}},
		{`root ::= "x"{2,3}`, []string{"xx", "xxx"}, []string{"x", "xxxx"}},
		{`root ::= "x"{2}`, []string{"xx"}, []string{"x", "xxx"}},
		{`root ::= "x"{2,}`, []string{"xx", "xxxxx"}, []string{"x", ""}},
		{`root ::= "(" root ")" | ""   # balanced, nullable, recursive`, []string{"", "()", "((()))"}, []string{"(", "())", ")("}},
		{`root ::= root "a" | "b"   # left recursion`, []string{"b", "baaa"}, []string{"a", "ab"}},
		{`root ::= e
e ::= e "+" t | t
t ::= t "*" f | f
f ::= "(" e ")" | [0-9]+`, []string{"1+2*3", "(1+2)*3", "((4))"}, []string{"1+", "(1", "1**2"}},
		{`root ::= a b
a ::= "x"?
b ::= "y"?`, []string{"", "x", "y", "xy"}, []string{"yx", "xx"}},
		{`root ::= . "\x41\u00e9\n"`, []string{"zAé\n", "日Aé\n"}, []string{"Aé\n"}},
		{"root ::= \"a\" |\n  \"b\"\n# comment\n", []string{"a", "b"}, []string{"ab"}},
		{"root ::= (\n \"a\"\n | \"b\"\n)", []string{"a", "b"}, nil},
		{`root ::= [\]\-]`, []string{"]", "-"}, []string{"a", "\\"}},
		{`root ::= "a" never
never ::= [^\x00-\U0010FFFF]`, nil, []string{"a", ""}},
	}
	for _, c := range cases {
		g, err := ParseGBNF(c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		p, err := Compile(g)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if p.Empty() {
			if len(c.yes) > 0 {
				t.Errorf("%q: empty language", c.src)
			}
			continue
		}
		m, err := NewMatcher(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.yes {
			if !matches(m, s) {
				t.Errorf("%q: rejects %q", c.src, s)
			}
		}
		for _, s := range c.no {
			if matches(m, s) {
				t.Errorf("%q: accepts %q", c.src, s)
			}
		}
		// Round trip through String.
		g2, err := ParseGBNF(g.String())
		if err != nil {
			t.Errorf("%q: reparse of %q: %v", c.src, g.String(), err)
			continue
		}
		p2, err := Compile(g2)
		if err != nil {
			t.Fatal(err)
		}
		if p2.Empty() != p.Empty() {
			t.Errorf("%q: round trip changes emptiness", c.src)
			continue
		}
		if p2.Empty() {
			continue
		}
		m2, _ := NewMatcher(p2)
		for _, s := range append(append([]string{}, c.yes...), c.no...) {
			if matches(m, s) != matches(m2, s) {
				t.Errorf("%q: round trip %q differs on %q", c.src, g.String(), s)
			}
		}
	}
}

func TestGBNFErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{`root ::= "a`, "1:10: unterminated string literal"},
		{`root ::= [a-`, "1:10: unterminated character class"},
		{"x ::= \"a\"", "no rule named root"},
		{"root ::= foo", "1:10: undefined rule \"foo\""},
		{"root ::= \"a\"\nroot ::= \"b\"", "2:1: rule \"root\" defined twice"},
		{"root ::= (\"a\"", "expected ) to close the group at 1:10"},
		{"root ::= \"a\"{3,1}", "upper bound is below"},
		{"root ::= [z-a]", "reversed"},
		{"root = \"a\"", "1:6: expected ::="},
		{"root ::= \"\\q\"", "unknown escape"},
		{"root ::= \"\\uD800\"", "not a Unicode scalar value"},
		{"root ::= )", "1:10: unexpected ')'"},
	}
	for _, c := range cases {
		_, err := ParseGBNF(c.src)
		if err == nil {
			t.Errorf("%q: no error", c.src)
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: %v is not a *SyntaxError", c.src, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %q, want it to contain %q", c.src, err, c.want)
		}
	}
}

func TestMatcherRollbackAndReject(t *testing.T) {
	m := mustMatcher(t, `root ::= "ab" [0-9]* "c"`)
	if err := m.Advance([]byte("ab12")); err != nil {
		t.Fatal(err)
	}
	var re *RejectError
	if err := m.Advance([]byte("3x")); !errors.As(err, &re) || re.Pos != 5 || re.Byte != 'x' {
		t.Fatalf("Advance(3x) = %v, want a rejection at offset 5", err)
	}
	if m.Pos() != 4 {
		t.Fatalf("a rejected Advance moved the matcher to %d", m.Pos())
	}
	if m.CanEnd() {
		t.Fatal("CanEnd before c")
	}
	c := m.Clone()
	if err := m.Reset(2); err != nil {
		t.Fatal(err)
	}
	if err := m.Advance([]byte("c")); err != nil || !m.CanEnd() {
		t.Fatalf("after reset: %v, CanEnd %v", err, m.CanEnd())
	}
	if err := c.Advance([]byte("9c")); err != nil || !c.CanEnd() {
		t.Fatalf("clone: %v", err)
	}
	if err := m.Reset(9); err == nil {
		t.Fatal("reset past the end accepted")
	}
}
