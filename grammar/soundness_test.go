package grammar

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"kiln/internal/testutil"
	"kiln/tokenizer"
)

// Real vocabularies from ../shared/models, loaded once per test binary.
var (
	vocabOnce sync.Map // name → *vocabEntry
)

type vocabEntry struct {
	once sync.Once
	tok  *tokenizer.Tokenizer
	v    *Vocabulary
	err  error
}

func realVocab(t testing.TB, name string) *Vocabulary {
	t.Helper()
	_, v := realTokenizer(t, name)
	return v
}

// realTokenizer returns a tokenizer from ../shared/models/tokenizers
// (tok512, llama2, llama3, qwen2) and its Vocabulary.
func realTokenizer(t testing.TB, name string) (*tokenizer.Tokenizer, *Vocabulary) {
	t.Helper()
	dir := filepath.Join(testutil.SharedModels(t), "tokenizers")
	e, _ := vocabOnce.LoadOrStore(name, &vocabEntry{})
	ve := e.(*vocabEntry)
	ve.once.Do(func() {
		var v *tokenizer.Vocab
		var err error
		switch name {
		case "tok512":
			v, err = tokenizer.LoadSentencePiece(filepath.Join(dir, "tok512-spm.model"))
		case "llama2":
			v, err = tokenizer.LoadSentencePiece(filepath.Join(dir, "llama2-spm.model"))
		case "llama3":
			v, err = tokenizer.LoadGPT2(filepath.Join(dir, "llama3.2-encoder.json"), filepath.Join(dir, "llama3.2-vocab.bpe"))
			if err == nil {
				v.Pre = "llama-bpe"
				err = v.AddSpecials(tokenizer.FamilyLlama3)
			}
		case "qwen2":
			v, err = tokenizer.LoadGPT2(filepath.Join(dir, "qwen2-vocab.json"), filepath.Join(dir, "qwen2-merges.txt"))
			if err == nil {
				v.Pre = "qwen2"
				err = v.AddSpecials(tokenizer.FamilyQwen2)
			}
		}
		if err != nil {
			ve.err = err
			return
		}
		tok, err := tokenizer.New(v)
		if err != nil {
			ve.err = err
			return
		}
		ve.tok = tok
		ve.v, ve.err = VocabularyFromTokenizer(tok)
	})
	if ve.err != nil {
		t.Fatal(ve.err)
	}
	return ve.tok, ve.v
}

// handSchemas are realistic schemas: nested objects, arrays, enums,
// recursion, formats, patterns, bounds.
var handSchemas = []string{
	`{"type":"object","properties":{"name":{"type":"string","maxLength":20},"age":{"type":"integer","minimum":0,"maximum":130},"email":{"type":"string","format":"email"}},"required":["name","age"],"additionalProperties":false}`,
	`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]},"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city"]}`,
	`{"type":"array","items":{"type":"object","properties":{"id":{"type":"string","format":"uuid"},"score":{"type":"number","minimum":0,"exclusiveMaximum":1},"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z][a-z0-9-]{0,15}$"},"maxItems":3}},"required":["id","score"],"additionalProperties":false},"minItems":1,"maxItems":4}`,
	`{"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["value"],"additionalProperties":false}},"$ref":"#/$defs/node"}`,
	`{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"day":{"type":"string","format":"date"},"at":{"type":"string","format":"time"},"site":{"type":"string","format":"uri"}},"required":["when","day","at","site"],"additionalProperties":false}`,
	`{"oneOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number","minimum":0}},"required":["kind","r"],"additionalProperties":false},{"type":"object","properties":{"kind":{"const":"rect"},"w":{"type":"number"},"h":{"type":"number"}},"required":["kind","w","h"],"additionalProperties":false}]}`,
	`{"type":"object","properties":{"a":{"anyOf":[{"type":"null"},{"type":"string","minLength":2,"maxLength":5}]},"b":{"type":["boolean","integer"],"maximum":-3},"c":{"allOf":[{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]},{"properties":{"y":{"type":"string"}},"additionalProperties":false}]}},"additionalProperties":{"type":"integer","exclusiveMinimum":-2.5,"maximum":1e3}}`,
	`{"type":"object","properties":{"q":{"type":"string","pattern":"(cat|dog)s?\\d{2}"},"k":{"type":"string","pattern":"^[^\\\\\"]{3}$"}},"required":["q","k"]}`,
	`{"type":"array","prefixItems":[{"const":"tuple"},{"type":"number","minimum":-1.25,"maximum":2.5},{"enum":[null,true,{"a":[1,2]}]}],"items":false}`,
	// Draft-07 forms (definitions, dependencies) with if/then/else and not.
	`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"pos":{"type":"integer","minimum":1,"maximum":99}},"type":"object","properties":{"kind":{"enum":["a","b"]},"n":{"$ref":"#/definitions/pos"},"note":{"type":"string","maxLength":8}},"required":["kind"],"dependencies":{"note":["n"]},"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["n"]},"else":{"not":{"required":["n"]}},"additionalProperties":false}`,
	// Annotation-heavy (OpenAPI / Kubernetes extensions), contains with
	// maxContains, overlapping oneOf, unevaluatedProperties.
	`{"title":"T","description":"d","x-kubernetes-preserve-unknown-fields":false,"type":"object","properties":{"tags":{"type":"array","items":{"type":"integer","minimum":0,"maximum":9,"example":3},"contains":{"const":7},"minContains":1,"maxContains":2,"readOnly":true},"v":{"oneOf":[{"type":"integer","maximum":5},{"type":"integer","minimum":3,"maximum":12}]}},"required":["tags","v"],"additionalProperties":false}`,
	// Patterns with length bounds (automata intersected; OpJSONChars).
	`{"type":"object","properties":{"id":{"type":"string","pattern":"[\\w+=,.@-]+","minLength":3,"maxLength":12},"name":{"type":"string","pattern":"^([A-Za-z]_?)+$","minLength":2,"maxLength":10},"note":{"type":"string","pattern":".*\\S.*","minLength":1,"maxLength":40}},"required":["id","name","note"],"additionalProperties":false}`,
	`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"anyOf":[{"properties":{"a":{"type":"string","maxLength":4}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}],"unevaluatedProperties":false}`,
}

func newValidator(t testing.TB, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("validator: %v", err)
	}
	return s
}

// sampleText draws tokens uniformly among those the mask allows, preferring
// to end once it may after minSteps, until an end-of-generation token or
// maxSteps. It fails the test on a dead end (an empty mask before the end).
func sampleText(t *testing.T, x *TokenIndex, rng *rand.Rand, minSteps, maxSteps int) (text []byte, ended bool) {
	t.Helper()
	tm, err := x.NewTokenMatcher()
	if err != nil {
		t.Fatal(err)
	}
	v := x.vocab
	mask := make([]uint64, MaskWords(v.Size()))
	var allowed []int32
	for step := 0; step < maxSteps; step++ {
		if step >= minSteps && tm.CanEnd() {
			return text, true
		}
		tm.FillMask(mask)
		allowed = allowed[:0]
		for w, word := range mask {
			for word != 0 {
				b := word & -word
				allowed = append(allowed, int32(w*64+bits.TrailingZeros64(b)))
				word ^= b
			}
		}
		if len(allowed) == 0 {
			t.Fatalf("dead end after %q", text)
		}
		id := allowed[rng.IntN(len(allowed))]
		if step >= minSteps {
			// Steer towards the end: prefer a token after which the text
			// can end, else one that closes something.
			best := int32(-1)
			for range 48 {
				c := allowed[rng.IntN(len(allowed))]
				if v.IsEOG(c) {
					best = c
					break
				}
				if tm.AcceptToken(c) == nil {
					end := tm.CanEnd()
					if err := tm.Rollback(1); err != nil {
						t.Fatal(err)
					}
					if end {
						best = c
						break
					}
				}
				if best < 0 && bytes.ContainsAny(v.TokenBytes(c), "\"]}") {
					best = c
				}
			}
			if best >= 0 {
				id = best
			}
		}
		if !tm.Allows(id) {
			t.Fatalf("token %d in the mask but Allows says no", id)
		}
		if v.IsEOG(id) {
			if err := tm.AcceptToken(id); err != nil {
				t.Fatal(err)
			}
			return text, true
		}
		if err := tm.AcceptToken(id); err != nil {
			t.Fatalf("token %d from the mask rejected: %v", id, err)
		}
		text = append(text, v.TokenBytes(id)...)
	}
	return text, false
}

// checkSound samples texts from schema's grammar and validates them.
func checkSound(t *testing.T, vocab *Vocabulary, schema string, seeds int, opts *SchemaOptions) (ended, unfinished int) {
	t.Helper()
	g, err := CompileJSONSchema([]byte(schema), opts)
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	p, err := Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	if p.Empty() {
		return 0, 0
	}
	x, err := NewTokenIndex(p, vocab)
	if err != nil {
		t.Fatal(err)
	}
	val := newValidator(t, schema)
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		text, done := sampleText(t, x, rng, 20, 400)
		if !done {
			unfinished++
			continue
		}
		ended++
		if !json.Valid(text) {
			t.Errorf("schema %s seed %d: output is not JSON: %q", schema, seed, text)
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
		if err != nil {
			t.Errorf("schema %s: %q: %v", schema, text, err)
			continue
		}
		if err := val.Validate(inst); err != nil {
			t.Errorf("schema %s seed %d: output %q does not validate: %v", schema, seed, text, err)
		}
	}
	return ended, unfinished
}

// TestSoundnessHandSchemas samples from realistic schemas over the Qwen2
// vocabulary and validates every finished output independently.
func TestSoundnessHandSchemas(t *testing.T) {
	vocab := realVocab(t, "qwen2")
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	var ended, unfinished int
	for _, s := range handSchemas {
		e, u := checkSound(t, vocab, s, seeds, nil)
		ended += e
		unfinished += u
	}
	t.Logf("%d outputs validated, %d hit the length cap", ended, unfinished)
	if ended == 0 {
		t.Fatal("no output finished")
	}
}

// TestSoundnessSuiteSchemas does the same for every test-suite schema the
// compiler accepts, over the Llama 2 vocabulary (SentencePiece with byte
// fallback), with compact whitespace.
func TestSoundnessSuiteSchemas(t *testing.T) {
	vocab := realVocab(t, "llama2")
	root, files := suiteFiles(t)
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	var ended, unfinished, schemas int
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if _, err := CompileJSONSchema(g.Schema, nil); err != nil {
				continue
			}
			if strings.Contains(string(g.Schema), `"pattern"`) || strings.Contains(string(g.Schema), "$schema\": \"http://localhost") {
				// The validator reads patterns as RE2 (\s, \w differ from
				// ECMA-262) and cannot load remote metaschemas.
				continue
			}
			if f == "format.json" || strings.HasPrefix(f, "optional/") && !strings.HasPrefix(f, "optional/format/") {
				continue
			}
			schemas++
			e, u := checkSound(t, vocab, string(g.Schema), seeds, &SchemaOptions{MaxWhitespace: -1})
			ended += e
			unfinished += u
		}
	}
	t.Logf("%d schemas: %d outputs validated, %d hit the length cap", schemas, ended, unfinished)
}
