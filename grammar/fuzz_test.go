package grammar

import (
	"errors"
	"testing"
)

// FuzzParseGBNF: no panic; what parses prints back to text that parses;
// what compiles matches input without panicking.
func FuzzParseGBNF(f *testing.F) {
	for _, s := range []string{
		`root ::= "a" | [b-d]+ x
x ::= ("(" x ")")* # c`,
		`root ::= [^"\\\n]{2,5} "\u00e9" .`,
		"root ::= a\na ::= a \"+\" | \"1\"",
		formatGBNF["uri"], formatGBNF["date"],
	} {
		f.Add(s, []byte("ab(c)"))
	}
	f.Fuzz(func(t *testing.T, src string, input []byte) {
		g, err := ParseGBNF(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			return
		}
		if _, err := ParseGBNF(g.String()); err != nil {
			t.Fatalf("printed grammar %q does not parse: %v", g.String(), err)
		}
		p, err := Compile(g)
		if err != nil || p.Empty() {
			return
		}
		m, err := NewMatcher(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(input) > 256 {
			input = input[:256]
		}
		for _, b := range input {
			if m.Advance([]byte{b}) != nil {
				break
			}
		}
		m.CanEnd()
	})
}

// FuzzCompileJSONSchema: no panic on any schema; errors are typed; what
// compiles gives a program a matcher can run.
func FuzzCompileJSONSchema(f *testing.F) {
	for _, s := range append([]string{benchSchema, `true`, `{"enum":[1,"a",{"b":null}]}`,
		`{"allOf":[{"$ref":"#"}]}`, `{"pattern":"^(a|b)*c{2,3}$"}`,
		`{"not":{"enum":[1,"a"]},"if":{"minimum":2},"then":{"maxLength":3},"else":{"required":["a"]}}`,
		`{"oneOf":[{"maximum":5},{"minimum":3,"multipleOf":1.5}],"contains":{"const":1},"maxContains":2}`,
		`{"patternProperties":{"^a":{"type":"integer"},"b$":{}},"properties":{"ab":{}},"unevaluatedProperties":false,"dependentRequired":{"a":["b"]}}`,
		`{"$id":"http://x/y","$defs":{"a":{"$anchor":"q","pattern":"\p{L}+","minLength":2,"maxLength":9}},"items":{"$ref":"#q"},"maxProperties":2}`}, handSchemas...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		g, err := CompileJSONSchema(schema, nil)
		if err != nil {
			var ue *UnsupportedError
			var se *SchemaError
			if !errors.As(err, &ue) && !errors.As(err, &se) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		p, err := Compile(g)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("compile: %v", err)
			}
			return
		}
		if p.Empty() {
			return
		}
		m, err := NewMatcher(p)
		if err != nil {
			t.Fatal(err)
		}
		_ = m.Advance([]byte(`{"a": [1, "x", null]}`))
	})
}
