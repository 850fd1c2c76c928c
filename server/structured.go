package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"kiln/grammar"
	"kiln/sample"
)

// Structured output: a request may constrain its completions to a JSON
// schema, any JSON object, one of a list of strings, or a GBNF grammar,
// in OpenAI's shape (response_format) or vLLM's extras (guided_json,
// guided_choice, guided_grammar, guided_regex, structured_outputs). The grammar is
// compiled once per (model, kind, text) and its token index cached; each
// completion gets its own matcher. A schema keyword the compiler does not
// enforce is a 400 naming it, never silently dropped.

// structuredRequest holds the fields that ask for structured output.
type structuredRequest struct {
	ResponseFormat    json.RawMessage `json:"response_format"`
	GuidedJSON        json.RawMessage `json:"guided_json"`
	GuidedChoice      []string        `json:"guided_choice"`
	GuidedGrammar     *string         `json:"guided_grammar"` // nil: absent; "" is refused, not ignored
	GuidedRegex       *string         `json:"guided_regex"`
	StructuredOutputs json.RawMessage `json:"structured_outputs"` // a structuredOutputs; read strictly by spec
}

// structuredOutputs is vLLM's structured_outputs object; a key it does not
// hold is a 400 naming it (a misspelt "jsn" would otherwise constrain
// nothing).
type structuredOutputs struct {
	JSON       json.RawMessage `json:"json"`
	JSONObject bool            `json:"json_object"`
	Choice     []string        `json:"choice"`
	Grammar    *string         `json:"grammar"`
	Regex      *string         `json:"regex"`
}

// jsonWhitespace bounds the whitespace a constrained JSON reply may put at
// each place JSON allows it: 1 byte (a space or a newline). The grammar
// package's default of 24 lets a small model spend its whole max_tokens on
// blank lines between keys (measured on stories260K: 200 tokens, mostly
// newlines, without closing a two-key object), the runaway llama.cpp's
// json-schema-to-grammar also bounds. On 60 real-world OpenAPI schemas
// (scripts/schema-corpus.mjs, stories260K, temperature 0.8, 768 tokens)
// 1 byte let 89-93% of replies finish, 2 bytes 76-78%, none 62%.
//
// Objects are strict (grammar.SchemaOptions.StrictProperties) unless the
// server was started with --allow-undeclared-properties.
var jsonWhitespace = &grammar.SchemaOptions{MaxWhitespace: 1, StrictProperties: true}

// schemaOptions returns the compile options of the spec.
func (c *constraintSpec) schemaOptions() *grammar.SchemaOptions {
	o := *jsonWhitespace
	o.StrictProperties = !c.openObjects
	o.MaxOutputBytes = c.maxOutput
	switch {
	case c.whitespace < 0:
		o.MaxWhitespace = -1 // none: compact JSON
	case c.whitespace > 0:
		o.MaxWhitespace = c.whitespace
	}
	return &o
}

// constraintSpec is what to compile: kind and its source text.
type constraintSpec struct {
	kind  string // json_schema, json_object, choice, grammar, regex
	text  string // the schema's JSON, the choices as JSON, the GBNF
	param string // the request field, for errors

	openObjects bool // the server's --allow-undeclared-properties (the same for every request)
	maxOutput   int  // the longest reply the model can give, in bytes (compileIndex sets it; 0: unknown)
	whitespace  int  // bytes of whitespace at each place JSON allows it (Config.JSONWhitespace; 0: jsonWhitespace's)
}

// spec reads the request's structured-output fields; nil when none.
func (q *structuredRequest) spec() (*constraintSpec, error) {
	var specs []*constraintSpec
	add := func(s *constraintSpec) { specs = append(specs, s) }
	if !isNull(q.ResponseFormat) {
		var rf struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(q.ResponseFormat, &rf); err != nil {
			return nil, badRequest("response_format", "response_format must be an object with a type")
		}
		switch rf.Type {
		case "text":
		case "json_object":
			add(&constraintSpec{kind: "json_object", param: "response_format"})
		case "json_schema":
			if rf.JSONSchema == nil || isNull(rf.JSONSchema.Schema) {
				return nil, badRequest("response_format", "response_format json_schema needs json_schema.schema")
			}
			add(&constraintSpec{kind: "json_schema", text: string(rf.JSONSchema.Schema), param: "response_format"})
		default:
			return nil, badRequest("response_format", "response_format type %q: want text, json_object or json_schema", rf.Type)
		}
	}
	so, err := q.structuredOutputs()
	if err != nil {
		return nil, err
	}
	if !isNull(q.GuidedJSON) {
		add(&constraintSpec{kind: "json_schema", text: string(q.GuidedJSON), param: "guided_json"})
	}
	if !isNull(so.JSON) {
		add(&constraintSpec{kind: "json_schema", text: string(so.JSON), param: "structured_outputs.json"})
	}
	if so.JSONObject {
		add(&constraintSpec{kind: "json_object", param: "structured_outputs.json_object"})
	}
	for param, choices := range map[string][]string{"guided_choice": q.GuidedChoice, "structured_outputs.choice": so.Choice} {
		if choices != nil {
			if len(choices) == 0 {
				return nil, badRequest(param, "%s is an empty list", param)
			}
			b, _ := json.Marshal(choices)
			add(&constraintSpec{kind: "choice", text: string(b), param: param})
		}
	}
	for param, g := range map[string]*string{"guided_grammar": q.GuidedGrammar, "structured_outputs.grammar": so.Grammar} {
		if g != nil {
			if *g == "" {
				return nil, badRequest(param, "%s is empty: want a GBNF grammar (or leave it out)", param)
			}
			add(&constraintSpec{kind: "grammar", text: *g, param: param})
		}
	}
	for param, re := range map[string]*string{"guided_regex": q.GuidedRegex, "structured_outputs.regex": so.Regex} {
		if re != nil {
			if *re == "" {
				return nil, badRequest(param, "%s is empty: want a regular expression (or leave it out)", param)
			}
			add(&constraintSpec{kind: "regex", text: *re, param: param})
		}
	}
	switch len(specs) {
	case 0:
		return nil, nil
	case 1:
		return specs[0], nil
	}
	return nil, badRequest(specs[1].param, "only one kind of structured output per request (got %s and %s)", specs[0].param, specs[1].param)
}

// structuredOutputs decodes structured_outputs, refusing keys it does not
// know and naming a mistyped one by its path.
func (q *structuredRequest) structuredOutputs() (*structuredOutputs, error) {
	so := &structuredOutputs{}
	if isNull(q.StructuredOutputs) {
		return so, nil
	}
	dec := json.NewDecoder(bytes.NewReader(q.StructuredOutputs))
	dec.DisallowUnknownFields()
	err := dec.Decode(so)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return so, nil
	case errors.As(err, &te):
		if field := pathAt(q.StructuredOutputs, te.Offset); field != "" {
			param := "structured_outputs." + field
			return nil, badRequest(param, "%s must not be %s (want %s)", param, te.Value, jsonKind(te.Type.Kind().String()))
		}
		return nil, badRequest("structured_outputs", "structured_outputs must be an object, not %s", te.Value)
	}
	// DisallowUnknownFields' error: json: unknown field "jsn"
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		key, _ = strconv.Unquote(key)
		param := "structured_outputs." + key
		return nil, badRequest(param, "%s is not supported: structured_outputs takes json, json_object, choice, grammar or regex", param)
	}
	return nil, badRequest("structured_outputs", "structured_outputs: %v", err)
}

// compile turns a spec into a grammar; errors are the client's (400).
func (c *constraintSpec) compile() (*grammar.Grammar, error) {
	var g *grammar.Grammar
	var err error
	switch c.kind {
	case "json_object":
		return grammar.JSONObjectGrammar(c.schemaOptions()), nil
	case "json_schema":
		g, err = grammar.CompileJSONSchema([]byte(c.text), c.schemaOptions())
	case "choice":
		var choices []string
		json.Unmarshal([]byte(c.text), &choices)
		alts := make([]*grammar.Expr, len(choices))
		for i, s := range choices {
			if s == "" {
				return nil, badRequest(c.param, "%s[%d] is empty", c.param, i)
			}
			alts[i] = grammar.Lit(s)
		}
		g = &grammar.Grammar{Rules: []grammar.Rule{{Name: "root", Body: grammar.Alt(alts...)}}}
		err = g.Validate()
	case "grammar":
		g, err = grammar.ParseGBNF(c.text)
	case "regex":
		g, err = grammar.RegexGrammar(c.text)
	}
	if err != nil {
		var ue *grammar.UnsupportedError
		code := "invalid_grammar"
		if errors.As(err, &ue) {
			code = "unsupported_schema_keyword"
		}
		ae := c.refused(err)
		ae.Code = code
		return nil, ae
	}
	return g, nil
}

// refused is the client's 400 for a grammar error of spec's field.
func (c *constraintSpec) refused(err error) *apiError {
	return badRequest(c.param, "%s: %s", c.param, strings.TrimPrefix(err.Error(), "grammar: "))
}

// constraint returns the factory of per-completion matchers for spec on
// the model in sl, from the server's grammar cache (compiled on a miss).
func (s *Server) constraint(sl *slot, spec *constraintSpec) (func() (sample.Constraint, error), error) {
	spec.openObjects = s.cfg.AllowUndeclaredProperties
	spec.whitespace = s.cfg.JSONWhitespace
	idx, err := s.grammars.get(sl, spec)
	if err != nil {
		return nil, err
	}
	return func() (sample.Constraint, error) { return idx.NewTokenMatcher() }, nil
}

// vocabulary is the model's tokens as bytes for grammar masks, built once.
func (sl *slot) vocabulary() (*grammar.Vocabulary, error) {
	sl.vocabOnce.Do(func() { sl.vocab, sl.vocabErr = grammar.VocabularyFromTokenizer(sl.m.Tokenizer) })
	return sl.vocab, sl.vocabErr
}
