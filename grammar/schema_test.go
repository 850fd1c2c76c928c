package grammar

import (
	"errors"
	"strings"
	"testing"
)

func schemaMatcher(t *testing.T, schema string, opts *SchemaOptions) *Matcher {
	t.Helper()
	g, err := CompileJSONSchema([]byte(schema), opts)
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

func TestSchemaTexts(t *testing.T) {
	cases := []struct {
		schema  string
		opts    *SchemaOptions
		yes, no []string
	}{
		// Schema order, optional properties skippable, declared keys not
		// repeated as additional ones.
		{`{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["b"]}`, nil,
			[]string{`{"b":"x"}`, `{"a":1,"b":"x"}`, `{"a":1, "b":"x","c":[true]}`, ` {"b":""} `},
			[]string{`{"b":"x","a":1}`, `{"a":1}`, `{"b":"x","b":"y"}`, `{"a":1,"b":"x","a":2}`, `{"b":1}`}},
		{`{"type":"object","additionalProperties":false}`, nil, []string{`{}`, `{ }`}, []string{`{"a":1}`}},
		{`{"type":"object"}`, &SchemaOptions{MaxWhitespace: -1}, []string{`{"a":{"b":[1,2.5e3,null]}}`}, []string{`{ }`, `{"a": 1}`}},
		{`{"type":"string","minLength":2,"maxLength":3}`, nil, []string{`"ab"`, `"a\nb"`, `"日本語"`, `"\u0001b"`}, []string{`"a"`, `"abcd"`, `"\u0061b"`, `"a\/"`}},
		{`{"type":"string","pattern":"^a+$"}`, nil, []string{`"a"`, `"aaa"`}, []string{`""`, `"ab"`, `"\u0061"`}},
		{`{"type":"string","pattern":"b"}`, nil, []string{`"b"`, `"abc"`}, []string{`"ac"`}},
		{`{"type":"integer","minimum":-5,"exclusiveMaximum":10}`, nil, []string{`-5`, `0`, `9`}, []string{`-6`, `10`, `1.5`, `-0`, `01`}},
		{`{"type":"number","exclusiveMinimum":0.5,"maximum":2}`, nil, []string{`0.51`, `1`, `2`, `2.000`}, []string{`0.5`, `0.50`, `2.01`, `1e0`}},
		{`{"enum":["a",1,null,{"x":[true]}]}`, nil, []string{`"a"`, `1`, `null`, `{"x":[true]}`}, []string{`"b"`, `{"x":[false]}`}},
		{`{"const":1.50}`, nil, []string{`1.5`}, []string{`1.50`, `2`}},
		{`{"type":"array","prefixItems":[{"type":"boolean"}],"items":{"type":"null"},"minItems":2,"maxItems":3}`, nil,
			[]string{`[true,null]`, `[false,null,null]`}, []string{`[true]`, `[null,null]`, `[true,null,null,null]`}},
		{`{"type":"string","format":"date"}`, nil, []string{`"2024-02-29"`, `"2023-12-31"`}, []string{`"2023-02-29"`, `"2023-04-31"`, `"1900-02-29"`}},
		{`{"$defs":{"t":{"type":"array","items":{"$ref":"#/$defs/t"}}},"$ref":"#/$defs/t"}`, nil, []string{`[]`, `[[],[[]]]`}, []string{`[1]`}},
	}
	for _, c := range cases {
		m := schemaMatcher(t, c.schema, c.opts)
		for _, s := range c.yes {
			if !matches(m, s) {
				t.Errorf("%s: rejects %s", c.schema, s)
			}
		}
		for _, s := range c.no {
			if matches(m, s) {
				t.Errorf("%s: accepts %s", c.schema, s)
			}
		}
	}
}

// TestSchemaAnnotations: keywords that constrain nothing (annotations,
// extensions, keywords JSON Schema does not define, a format kiln does not
// know, then/else without if) are ignored: the schema derives exactly the
// texts of the same schema without them (issue 25: 23 of 60 real-world
// schemas were refused for such keywords).
func TestSchemaAnnotations(t *testing.T) {
	for _, c := range []struct{ with, without string }{
		{`{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"string","example":"x","readonly":true}},"required":["a"],"additionalProperties":false}`,
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`},
		{`{"id":"http://example.com/s","_format":"x","type":"integer","minimum":1,"maximum":3}`, `{"type":"integer","minimum":1,"maximum":3}`},
		{`{"type":"string","format":"ipv4","maxLength":3}`, `{"type":"string","maxLength":3}`},
		{`{"enum":["a","b"],"then":{"const":"a"},"else":false,"maxContains":1}`, `{"enum":["a","b"]}`},
		{`{"allOf":[{"type":"string","x-a":1},{"maxLength":2,"x-a":2}]}`, `{"type":"string","maxLength":2}`},
		{`{"type":"array","items":{"type":"boolean"},"additionalItems":false,"maxItems":2}`, `{"type":"array","items":{"type":"boolean"},"maxItems":2}`},
	} {
		gw, err := CompileJSONSchema([]byte(c.with), nil)
		if err != nil {
			t.Errorf("%s: %v", c.with, err)
			continue
		}
		go2, err := CompileJSONSchema([]byte(c.without), nil)
		if err != nil {
			t.Fatal(err)
		}
		pw, err1 := Compile(gw)
		po, err2 := Compile(go2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for _, text := range []string{`{"a":"x"}`, `{"a":1}`, `{}`, `2`, `4`, `"1.2"`, `"1.2.3.4"`, `"a"`, `"c"`, `""`, `"abc"`, `[true,false]`, `[true,false,true]`, `[]`, `"ab"`} {
			if a, b := programAccepts(pw, text), programAccepts(po, text); a != b {
				t.Errorf("%s accepts %s: %v; without the annotations: %v", c.with, text, a, b)
			}
		}
	}
}

// TestSchemaStrictProperties: with StrictProperties an object that lists
// properties and says nothing of additionalProperties allows no others; a
// required but undeclared property, an explicit additionalProperties and an
// object without properties are unchanged.
func TestSchemaStrictProperties(t *testing.T) {
	for _, c := range []struct {
		schema          string
		text            string
		literal, strict bool
	}{
		{`{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"a":1}`, true, true},
		{`{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"a":1,"b":2}`, true, false},
		{`{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"b":2}`, true, false},
		{`{"type":"object","properties":{"a":{"type":"integer"}},"required":["b"]}`, `{"b":"x"}`, true, true},
		{`{"type":"object","properties":{"a":{"type":"integer"}},"required":["b"]}`, `{"b":"x","c":1}`, true, false},
		{`{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"string"}}`, `{"b":"x"}`, true, true},
		{`{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":true}`, `{"b":2}`, true, true},
		{`{"type":"object"}`, `{"b":2}`, true, true},
	} {
		for _, strict := range []bool{false, true} {
			g, err := CompileJSONSchema([]byte(c.schema), &SchemaOptions{StrictProperties: strict})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Compile(g)
			if err != nil {
				t.Fatal(err)
			}
			want := c.literal
			if strict {
				want = c.strict
			}
			if got := programAccepts(p, c.text); got != want {
				t.Errorf("%s (strict %v) accepts %s: %v, want %v", c.schema, strict, c.text, got, want)
			}
		}
	}
}

// TestSchemaPatternWithLength: a pattern that matches every string leaves
// the length bounds alone, an anchored repeated class has its repetition
// narrowed by them; other patterns with bounds stay refused.
func TestSchemaPatternWithLength(t *testing.T) {
	for _, c := range []struct {
		schema  string
		opts    *SchemaOptions
		yes, no []string
	}{
		{`{"type":"string","pattern":"^[0-9a-z]+$","minLength":3,"maxLength":4}`, nil, []string{`"abc"`, `"ab12"`}, []string{`"ab"`, `"abcde"`, `"ABC"`, `"ab-"`}},
		{`{"type":"string","pattern":"^[0-9a-zA-Z]+$","minLength":10,"maxLength":10}`, nil, []string{`"0123456789"`}, []string{`"012345678"`, `"01234567890"`}},
		{`{"type":"string","pattern":"[\\S\\s]*","minLength":0,"maxLength":2}`, nil, []string{`""`, `"a "`}, []string{`"abc"`}},
		{`{"type":"string","pattern":"^a*","minLength":2}`, nil, []string{`"bb"`, `"aab"`}, []string{`"b"`}},
		{`{"type":"string","maxLength":1048576}`, &SchemaOptions{MaxOutputBytes: 4096}, []string{`"abc"`, `""`}, []string{`1`}},
		// Bounds every match of the pattern meets.
		{`{"type":"string","pattern":"^[a-z]{3}-([0-9]{2}|x)$","minLength":5,"maxLength":6}`, nil, []string{`"abc-12"`, `"abc-x"`}, []string{`"abc-1"`}},
		{`{"type":"string","pattern":".*\\S.*","minLength":1}`, nil, []string{`"a"`, `" b "`}, []string{`""`, `"  "`}},
		// Any pattern with length bounds: the automata intersected.
		{`{"type":"string","pattern":".*\\S.*","minLength":1,"maxLength":128}`, nil, []string{`"a"`, `"  b"`}, []string{`"  "`, `"` + strings.Repeat("a", 129) + `"`}},
		{`{"type":"string","pattern":"^(ab)+$","maxLength":9}`, nil, []string{`"ab"`, `"abababab"`}, []string{`"ababababab"`, `"aba"`}},
		{`{"type":"string","pattern":"[\\w+=,.@-]+","minLength":3,"maxLength":5}`, nil, []string{`"a  "`, `"  @  "`}, []string{`"   "`, `"ab"`, `"abcdef"`}},
		{`{"type":"string","pattern":"^([A-Za-z]_?)+$","minLength":2,"maxLength":4}`, nil, []string{`"ab"`, `"a_b_"`}, []string{`"a"`, `"a__b"`, `"abcde"`}},
		{`{"type":"array","items":{"type":"integer"},"maxItems":1048576}`, &SchemaOptions{MaxOutputBytes: 4096}, []string{`[1,2,3]`, `[]`}, []string{`["a"]`}},
	} {
		checkSchemaTexts(t, c.schema, c.opts, c.yes, c.no)
	}
	for _, s := range []string{
		`{"type":"string","maxLength":1048576}`, // no MaxOutputBytes: too large
	} {
		checkSchemaRefused(t, s)
	}
}

// TestSchemaMaps: objects without declared properties whose keys are named
// by propertyNames, or by one patternProperties entry with
// additionalProperties false.
func TestSchemaMaps(t *testing.T) {
	for _, c := range []struct {
		schema  string
		yes, no []string
	}{
		{`{"type":"object","propertyNames":{"pattern":"^[a-z]+$"},"additionalProperties":{"type":"integer"}}`,
			[]string{`{}`, `{"ab":1}`, `{"a":1,"b":2}`}, []string{`{"A":1}`, `{"a":"x"}`, `{"":1}`, `{"a1":1}`}},
		{`{"type":"object","propertyNames":{"maxLength":2}}`, []string{`{"ab":[1]}`, `{"":null}`}, []string{`{"abc":1}`}},
		{`{"type":"object","patternProperties":{"^x-[a-z]+$":{"type":"boolean"}},"additionalProperties":false}`,
			[]string{`{}`, `{"x-a":true,"x-bc":false}`}, []string{`{"y-a":true}`, `{"x-a":1}`, `{"x-":true}`}},
		{`{"type":"object","propertyNames":false}`, []string{`{}`}, []string{`{"a":1}`}},
		// A pattern beside declared properties none of which it matches.
		{`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":false}`,
			[]string{`{"name":"a"}`, `{"name":"a","x-b":1}`}, []string{`{"name":"a","x-b":"s"}`, `{"name":"a","y":1}`, `{"x-b":1}`, `{"name":"a","name":"b"}`}},
		// Patterns whose schemas are all true, nothing said of other keys: no constraint.
		{`{"type":"object","properties":{"a":{"type":"integer"}},"patternProperties":{"^x-":{}}}`, []string{`{"a":1,"x-q":[2]}`, `{"b":1}`}, []string{`{"a":"s"}`}},
		{`{"type":"object","propertyNames":{"enum":["a","b",3]}}`, []string{`{}`, `{"a":1,"b":2}`}, []string{`{"c":1}`, `{"3":1}`}},
		{`{"type":"object","propertyNames":{"not":{"const":"x"}}}`, []string{`{"ab":1}`}, []string{`{"x":1}`}},
	} {
		checkSchemaTexts(t, c.schema, nil, c.yes, c.no)
	}
	// patternProperties in general: keys split by the patterns they match.
	for _, c := range []struct {
		schema  string
		yes, no []string
	}{
		{`{"patternProperties":{"^a":{},"^b":{}},"additionalProperties":false}`, []string{`{"a1":1,"b":2}`, `{}`}, []string{`{"c":1}`}},
		{`{"patternProperties":{"^a":{"type":"integer"}}}`, []string{`{"a":1,"b":"x"}`, `{"b":[]}`}, []string{`{"ab":"x"}`}},
		{`{"patternProperties":{"^a":{"minimum":2},"b$":{"maximum":5}},"additionalProperties":{"type":"string"}}`,
			[]string{`{"ab":3}`, `{"a":9,"b":0,"c":"x"}`}, []string{`{"ab":9}`, `{"ab":1}`, `{"c":1}`}},
		{`{"properties":{"ab":{"minimum":5}},"patternProperties":{"^a":{"type":"integer"}},"additionalProperties":false}`,
			[]string{`{"ab":5,"ac":1}`, `{}`}, []string{`{"ab":"x"}`, `{"ab":3}`, `{"b":1}`, `{"ab":5,"ab":6}`, `{"ab":5,"ac":"x"}`}},
		{`{"required":["ab"],"patternProperties":{"^a":{"type":"integer"}},"additionalProperties":false}`,
			[]string{`{"ab":1}`, `{"ab":1,"ac":2}`}, []string{`{}`, `{"ab":1,"ab":2}`, `{"b":1}`, `{"ab":"x"}`}},
	} {
		checkSchemaTexts(t, c.schema, nil, c.yes, c.no)
	}
	for _, s := range []string{
		`{"properties":{"a":{}},"propertyNames":{"pattern":"^a"}}`, // declared properties
		`{"patternProperties":{"a":{},"b":{},"c":{},"d":{"type":"string"}}}`,
	} {
		checkSchemaRefused(t, s)
	}
}

// TestSchemaPropertyCounts: minProperties 1 forbids the empty object, a
// maxProperties no object can exceed is no bound; other counts are refused.
func TestSchemaPropertyCounts(t *testing.T) {
	for _, c := range []struct {
		schema  string
		yes, no []string
	}{
		{`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"minProperties":1}`, []string{`{"a":1}`, `{"b":2}`, `{"a":1,"b":2}`}, []string{`{}`}},
		{`{"type":"object","minProperties":1}`, []string{`{"x":null}`}, []string{`{}`}},
		{`{"type":"object","properties":{"a":{}},"additionalProperties":false,"maxProperties":1}`, []string{`{}`, `{"a":1}`}, []string{`{"b":1}`}},
		{`{"allOf":[{"type":"object","minProperties":0},{"minProperties":1}]}`, []string{`{"q":1}`}, []string{`{}`}},
	} {
		checkSchemaTexts(t, c.schema, nil, c.yes, c.no)
	}
	// Counted members (countedObject).
	for _, c := range []struct {
		schema  string
		yes, no []string
	}{
		{`{"type":"object","minProperties":2}`, []string{`{"x":1,"y":2}`, `{"x":1,"y":2,"z":3}`}, []string{`{}`, `{"x":1}`}},
		{`{"type":"object","maxProperties":1}`, []string{`{}`, `{"x":1}`}, []string{`{"x":1,"y":2}`}},
		{`{"type":"object","properties":{"a":{},"b":{}},"additionalProperties":false,"maxProperties":1}`,
			[]string{`{}`, `{"a":1}`, `{"b":1}`}, []string{`{"a":1,"b":2}`}},
		{`{"type":"object","properties":{"a":{},"b":{}},"required":["b"],"minProperties":2,"maxProperties":3}`,
			[]string{`{"a":1,"b":2}`, `{"b":2,"c":3}`, `{"a":1,"b":2,"c":3}`}, []string{`{"b":2}`, `{"a":1,"b":2,"c":3,"d":4}`, `{"a":1}`}},
		{`{"type":"object","maxProperties":0}`, []string{`{}`}, []string{`{"a":1}`}},
		{`{"type":"object","minProperties":3,"maxProperties":2}`, nil, []string{`{}`, `{"a":1,"b":2,"c":3}`}},
	} {
		checkSchemaTexts(t, c.schema, nil, c.yes, c.no)
	}
	// Counting past the rule budget is refused as too large.
	checkSchemaRefused(t, `{"type":"object","properties":{"a":{},"b":{},"c":{},"d":{}},"maxProperties":9000}`)
}

// checkSchemaTexts compiles schema with opts and checks that its program
// derives every text of yes and none of no.
func checkSchemaTexts(t *testing.T, schema string, opts *SchemaOptions, yes, no []string) {
	t.Helper()
	g, err := CompileJSONSchema([]byte(schema), opts)
	if err != nil {
		t.Errorf("%s: %v", schema, err)
		return
	}
	p, err := Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range yes {
		if !programAccepts(p, text) {
			t.Errorf("%s rejects %s", schema, text)
		}
	}
	for _, text := range no {
		if programAccepts(p, text) {
			t.Errorf("%s accepts %s", schema, text)
		}
	}
}

// checkSchemaRefused checks that schema does not compile.
func checkSchemaRefused(t *testing.T, schema string) {
	t.Helper()
	if _, err := CompileJSONSchema([]byte(schema), nil); err == nil {
		t.Errorf("%s compiled; want it refused", schema)
	}
}

// programAccepts reports whether p derives text exactly.
func programAccepts(p *Program, text string) bool {
	m, err := NewMatcher(p)
	if err != nil {
		return false
	}
	return m.Advance([]byte(text)) == nil && m.CanEnd()
}

func TestSchemaFailsClosed(t *testing.T) {
	cases := []struct{ schema, keyword string }{
		{`{"type":"string","minLength":2,"pattern":"^(ab)+$","maxLength":5000}`, "minLength"}, // more automaton states than maxDFAStates
		{`{"not":{"type":"string","format":"date"}}`, "not"},                                  // kiln asserts formats; 2020-12 reads them as annotations
		{`{"not":{"const":{"a":1}}}`, "not"},
		{`{"properties":{"a":{"if":{"const":[1]},"then":{}}}}`, "if"},
		{`{"patternProperties":{"a":{},"b":{},"c":{},"d":{"type":"string"}}}`, "patternProperties"},
		{`{"type":"array","contains":{"type":"string"},"maxItems":3}`, "contains"},
		{`{"type":"array","contains":{"const":{"a":1}},"maxContains":1}`, "maxContains"},
		{`{"allOf":[{"contains":{"type":"string"}},{"contains":{"type":"integer"}}]}`, "contains"},
		{`{"allOf":[{"additionalProperties":false},{"patternProperties":{"^a":{}}}]}`, "patternProperties"},
		{`{"uniqueItems":true}`, "uniqueItems"},
		{`{"allOf":[{"format":"date"},{"format":"uuid"}]}`, "format"},
		{`{"pattern":"(?=a)"}`, "pattern"},
		{`{"$ref":"http://example.com/s.json"}`, "$ref"},
		{`{"oneOf":[{"minimum":1},{"const":[1]}]}`, "oneOf"},
		{`{"type":"integer","multipleOf":123456789}`, "multipleOf"},
		{`{"not":{"multipleOf":2}}`, "not"},
	}
	for _, c := range cases {
		_, err := CompileJSONSchema([]byte(c.schema), nil)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || ue.Keyword != c.keyword {
			t.Errorf("%s: error %v, want an UnsupportedError naming %q", c.schema, err, c.keyword)
		}
	}
	for _, s := range []string{`{"type":"strin"}`, `{"minLength":-1}`, `{"$ref":"#/nowhere"}`, `{"a":`, `[1]`} {
		_, err := CompileJSONSchema([]byte(s), nil)
		var se *SchemaError
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v, want a SchemaError", s, err)
		}
	}
	// Annotations are ignored.
	if _, err := CompileJSONSchema([]byte(`{"title":"t","description":"d","examples":[1],"default":2,"$comment":"c","deprecated":true,"type":"integer"}`), nil); err != nil {
		t.Error(err)
	}
}

func TestJSONObjectGrammar(t *testing.T) {
	p, err := Compile(JSONObjectGrammar(nil))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewMatcher(p)
	for _, s := range []string{`{}`, `{"a": [1, {"b": "c"}], "d": -0.5e-3}`} {
		if !matches(m, s) {
			t.Errorf("rejects %s", s)
		}
	}
	for _, s := range []string{`[]`, `"x"`, `{"a":}`, `{"a":1,}`} {
		if matches(m, s) {
			t.Errorf("accepts %s", s)
		}
	}
}
