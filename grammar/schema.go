package grammar

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// JSON Schema (drafts 4 to 2020-12) → Grammar.
//
// Supported, and enforced exactly over the canonical text forms below:
//
//	type (one or a list; integer ⊂ number)       enum, const
//	properties, required, additionalProperties    anyOf, allOf (merged into one schema)
//	patternProperties (keys split by the patterns they match: automata)
//	propertyNames (objects without declared properties)
//	minProperties, maxProperties (members counted: countedObject)
//	items, prefixItems, minItems, maxItems         uniqueItems: false
//	contains, minContains, maxContains (counted)  multipleOf (digit residues: multipleof.go)
//	minLength, maxLength, pattern (regex subset, \p{...} from Go's Unicode
//	tables), format: date-time date time uuid email uri (together, and
//	beside a negated enum: automata intersected, regexdfa.go)
//	minimum, maximum, exclusiveMinimum, exclusiveMaximum (integers exactly;
//	numbers without exponent when bounded)
//	not (schema_not.go: the complement written as a schema)
//	if/then/else, dependentRequired, dependentSchemas, dependencies, oneOf
//	whose alternatives may overlap (schema_rewrite.go: through negation)
//	unevaluatedProperties, unevaluatedItems (schema_uneval.go: distributed)
//	$ref: JSON pointers, $id-relative URIs, $anchor, $dynamicRef with one
//	possible target, all inside the document (schema_uri.go); recursion
//
// Ignored as annotations, as the specification says of every keyword a
// validator does not know: title, description, $comment, examples, default,
// $schema, deprecated, readOnly, writeOnly, contentMediaType,
// contentEncoding, contentSchema (annotations only in 2020-12), and every
// keyword that is not one of JSON Schema's assertions or applicators
// (OpenAPI's example, x-* extensions, draft-04's id, a misspelling); $defs
// and definitions hold schemas for $ref. A format kiln does not know is an
// annotation too (the string is unconstrained by it); the formats it knows
// are asserted. A known assertion kiln does not enforce
// (assertionKeywords: $dynamicRef that stays dynamic, $recursiveRef) is an
// *UnsupportedError naming it, as are supported keywords in combinations
// the compiler cannot enforce exactly (the complement of format,
// uniqueItems: true, a reference to another document, ...): fail closed.
// The README lists what stays refused.
//
// The text the grammar derives (and accepts):
//   - Objects list the properties of "properties" in schema order, each
//     optional unless required; properties required but not declared follow,
//     in "required" order; then, unless additionalProperties is false, any
//     number of other properties (keys different from the declared ones).
//     OpenAI's strict mode and llguidance use the same order.
//   - Strings use one encoding per character (see jsonlang.go): no "\/", no
//     \u escape of a printable character; this is what makes patterns and
//     "key not declared" exact.
//   - Numbers: integers without leading zeros or -0; unbounded numbers any
//     JSON number with at most 3 exponent digits; bounded numbers, numbers
//     with multipleOf and non-integers (a negated integer type) plain
//     decimals. Enum and const values are written as canonical decimals.
//   - Whitespace: before and after the root value and around the tokens
//     [ ] { } , : up to SchemaOptions.MaxWhitespace bytes (space, tab,
//     newline, carriage return) at each place; none elsewhere.

// SchemaOptions tune the compiled grammar.
type SchemaOptions struct {
	// MaxWhitespace bounds the whitespace at each place JSON allows it
	// (after { [ , : and before } ]): 0 means DefaultMaxWhitespace,
	// negative means none (compact JSON).
	MaxWhitespace int
	// StrictProperties makes an object schema that declares properties
	// but says nothing of additionalProperties allow no other property
	// (as if it said additionalProperties: false), the default of
	// xgrammar's strict mode and llama.cpp's converter: small models fed
	// the literal reading keep inventing properties and never close the
	// object. A required property the schema does not declare stays
	// allowed, with any value. Objects without "properties" stay open.
	StrictProperties bool
	// MaxOutputBytes, when positive, is the longest text the grammar will
	// ever be asked to derive (a model's context times its longest
	// token): a maxLength or maxItems at or above it constrains nothing
	// that can be generated and is dropped, rather than refused as too
	// large to compile (AWS's schemas say maxLength 1048576).
	MaxOutputBytes int
}

// DefaultMaxWhitespace is the whitespace allowed at each separator by
// default: room for a newline and indentation of pretty-printed JSON.
const DefaultMaxWhitespace = 24

// Compile-time limits.
const (
	maxSchemaDepth = 64   // nesting of schemas, $ref and allOf expansions
	maxSchemaRules = 4096 // rules of a compiled schema
	maxMergeAlts   = 64   // alternatives of anyOf × anyOf products in allOf
)

// UnsupportedError is a schema keyword the compiler does not enforce (or not
// in this combination). An API maps it to 400.
type UnsupportedError struct {
	Keyword string // the keyword, as written in the schema
	Path    string // JSON pointer of the schema object that holds it
	Reason  string
}

func (e *UnsupportedError) Error() string {
	s := fmt.Sprintf("grammar: unsupported JSON Schema keyword %q at %q", e.Keyword, pathOrRoot(e.Path))
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// SchemaError is a malformed schema (a keyword with a value of the wrong
// kind, a $ref that leads nowhere, JSON that does not parse).
type SchemaError struct {
	Path string
	Msg  string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("grammar: invalid schema at %q: %s", pathOrRoot(e.Path), e.Msg)
}

func pathOrRoot(p string) string {
	if p == "" {
		return "#"
	}
	return "#" + p
}

var annotationKeywords = map[string]bool{
	"title": true, "description": true, "$comment": true, "examples": true, "default": true,
	"$schema": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"contentMediaType": true, "contentEncoding": true, "contentSchema": true,
	"$defs": true, "definitions": true,
}

// assertionKeywords are JSON Schema's assertions and applicators (drafts
// 4 to 2020-12) that the compiler does not enforce: a schema using one is
// refused, never silently loosened. then/else only act beside if, and
// minContains/maxContains beside contains; additionalItems beside an
// array-form items (draft 4-2019), which the compiler refuses itself.
var assertionKeywords = map[string]bool{
	"multipleOf":            true,
	"unevaluatedProperties": true, "unevaluatedItems": true, "$dynamicRef": true, "$recursiveRef": true,
}

// ignoredKeyword reports whether keyword k of a schema object constrains
// nothing kiln must enforce: an annotation, or a keyword JSON Schema does
// not define (an annotation by the specification).
func ignoredKeyword(s *jsonValue, k string) bool {
	switch k {
	case "then", "else":
		return s.get("if") == nil
	case "minContains", "maxContains":
		return s.get("contains") == nil
	case "additionalItems":
		it := s.get("items")
		return it == nil || it.kind != jArray
	}
	return annotationKeywords[k] || !(supportedKeywords[k] || assertionKeywords[k])
}

var supportedKeywords = map[string]bool{
	"type": true, "enum": true, "const": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "prefixItems": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"anyOf": true, "oneOf": true, "allOf": true, "$ref": true,
	"uniqueItems": true, "minProperties": true, "maxProperties": true, "$id": true,
	"patternProperties": true, "propertyNames": true, // maps only: see objectExpr
	"not": true, "if": true, "then": true, "else": true, // schema_rewrite.go
	"dependentRequired": true, "dependentSchemas": true, "dependencies": true,
	"contains": true, "minContains": true, "maxContains": true, // arrayExpr
	kwTypes: true, kwNotIn: true, kwPatterns: true, kwNotPatterns: true, // schema_not.go
	"unevaluatedProperties": true, "unevaluatedItems": true, // schema_uneval.go
	"multipleOf": true, // numberExpr: 1, 10^-n, 1/m on integers
}

func asUnsupported(err error, ue **UnsupportedError) bool { return errors.As(err, ue) }

// CompileJSONSchema compiles a JSON Schema document to a grammar of the JSON
// texts that satisfy it. opts may be nil.
func CompileJSONSchema(schema []byte, opts *SchemaOptions) (*Grammar, error) {
	doc, err := parseJSON(schema)
	if err != nil {
		return nil, &SchemaError{Msg: err.Error()}
	}
	var o SchemaOptions
	if opts != nil {
		o = *opts
	}
	normalizeDrafts(doc, 0)
	resolveDocumentRefs(doc)
	c := newSchemaCompiler(doc, o)
	return c.compileRoot(doc, "")
}

// JSONObjectGrammar returns the grammar of any JSON object (response_format
// json_object), with the whitespace of opts (nil: the default).
func JSONObjectGrammar(opts *SchemaOptions) *Grammar {
	g, err := CompileJSONSchema([]byte(`{"type":"object"}`), opts)
	if err != nil {
		panic(err) // not reached: a fixed, supported schema
	}
	return g
}

type schemaCompiler struct {
	opts   SchemaOptions
	doc    *jsonValue
	g      *Grammar
	refs   map[string]int // JSON pointer → rule
	shared map[string]int // name → shared rule (ws, value, string, ...)
	depth  int
	steps  *int // schema operations so far (compile, merge, negate, ...), shared with sub-compilers
}

// maxSchemaSteps bounds the schema operations (compiling a subschema,
// merging two, negating one, distributing an applicator) of one
// compilation: negation and distribution copy schemas, and a hostile
// schema nesting them must be refused quickly, not after exponential
// work. The test suite's largest compilation takes about 2,000 (measured:
// see TestSchemaHostileRefusedQuickly).
const maxSchemaSteps = 100000

// step counts one schema operation against maxSchemaSteps.
func (c *schemaCompiler) step(path string) error {
	*c.steps++
	if *c.steps > maxSchemaSteps {
		return fmt.Errorf("grammar: schema at %q takes more than %d schema operations to compile: %w", pathOrRoot(path), maxSchemaSteps, ErrTooLarge)
	}
	return nil
}

func newSchemaCompiler(doc *jsonValue, o SchemaOptions) *schemaCompiler {
	if o.MaxWhitespace == 0 {
		o.MaxWhitespace = DefaultMaxWhitespace
	}
	return &schemaCompiler{opts: o, doc: doc, g: &Grammar{}, refs: map[string]int{}, shared: map[string]int{}, steps: new(int)}
}

// compileRoot compiles s as the start of the grammar.
func (c *schemaCompiler) compileRoot(s *jsonValue, path string) (*Grammar, error) {
	root := c.newRule("root")
	body, err := c.compile(s, path)
	if err != nil {
		return nil, err
	}
	ws := c.ws()
	c.g.Rules[root].Body = Seq(ws, body, ws)
	c.g.Root = root
	if err := c.g.Validate(); err != nil {
		return nil, err
	}
	return c.g, nil
}

func (c *schemaCompiler) newRule(name string) int {
	c.g.Rules = append(c.g.Rules, Rule{Name: name, Body: Never()})
	return len(c.g.Rules) - 1
}

func (c *schemaCompiler) checkRules(path string) error {
	if len(c.g.Rules) > maxSchemaRules {
		return fmt.Errorf("grammar: schema at %q needs more than %d rules: %w", pathOrRoot(path), maxSchemaRules, ErrTooLarge)
	}
	return nil
}

func unsupported(path, kw, reason string) error {
	return &UnsupportedError{Keyword: kw, Path: path, Reason: reason}
}

func schemaErr(path, format string, args ...any) error {
	return &SchemaError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

func childPath(path string, parts ...string) string {
	for _, p := range parts {
		path += "/" + strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
	}
	return path
}

// Type bits.
const (
	tNull uint8 = 1 << iota
	tBool
	tObject
	tArray
	tString
	tInteger
	tFraction // numbers that are not integers
	tAll      = tNull | tBool | tObject | tArray | tString | tInteger | tFraction
	tNumber   = tInteger | tFraction
)

var typeNames = map[string]uint8{
	"null": tNull, "boolean": tBool, "object": tObject, "array": tArray,
	"string": tString, "integer": tInteger, "number": tNumber,
}

// declaredTypes reads the type keyword (tAll when absent).
func declaredTypes(s *jsonValue, path string) (uint8, error) {
	bits, err := typeKeyword(s, path)
	if err != nil {
		return 0, err
	}
	if v := s.get(kwTypes); v != nil {
		b, err := typeBits(v, path)
		if err != nil {
			return 0, err
		}
		bits &= b
	}
	return bits, nil
}

// typeKeyword reads the type keyword alone (tAll when absent).
func typeKeyword(s *jsonValue, path string) (uint8, error) {
	t := s.get("type")
	if t == nil {
		return tAll, nil
	}
	one := func(v *jsonValue) (uint8, error) {
		if v.kind != jString {
			return 0, schemaErr(path, "type must be a string or an array of strings")
		}
		b, ok := typeNames[v.str]
		if !ok {
			return 0, schemaErr(path, "unknown type %q", v.str)
		}
		return b, nil
	}
	if t.kind == jArray {
		var bits uint8
		for _, e := range t.arr {
			b, err := one(e)
			if err != nil {
				return 0, err
			}
			bits |= b
		}
		return bits, nil
	}
	return one(t)
}

// valueType returns the type bit of a JSON value.
func valueType(v *jsonValue) uint8 {
	switch v.kind {
	case jNull:
		return tNull
	case jBool:
		return tBool
	case jObject:
		return tObject
	case jArray:
		return tArray
	case jString:
		return tString
	}
	if r, ok := new(big.Rat).SetString(v.num); ok && r.IsInt() {
		return tInteger
	}
	return tFraction
}

// checkKeywords fails on keywords outside the supported subset.
func (c *schemaCompiler) checkKeywords(s *jsonValue, path string) error {
	for _, m := range s.obj {
		k := m.key
		switch {
		case ignoredKeyword(s, k):
		case k == "$id":
			// References were resolved against the base URIs $id sets
			// before compiling (resolveDocumentRefs).
		case k == "uniqueItems":
			if m.val.kind != jBool {
				return schemaErr(path, "uniqueItems must be a boolean")
			}
			if m.val.b {
				return unsupported(path, k, "")
			}
		case k == "minProperties", k == "maxProperties":
			// Counted by objectExpr.
			if _, err := nonNegInt(m.val, path, k); err != nil {
				return err
			}
		case supportedKeywords[k]:
		default:
			return unsupported(path, k, "")
		}
	}
	return nil
}

// constraining reports whether s has keywords other than annotations.
func constraining(s *jsonValue, except ...string) bool {
	for _, m := range s.obj {
		if !ignoredKeyword(s, m.key) && m.key != "$id" && !slices.Contains(except, m.key) {
			return true
		}
	}
	return false
}

// without returns a copy of object s without the given keywords.
func without(s *jsonValue, keys ...string) *jsonValue {
	out := &jsonValue{kind: jObject}
	for _, m := range s.obj {
		if !slices.Contains(keys, m.key) {
			out.obj = append(out.obj, m)
		}
	}
	return out
}

func nonNegInt(v *jsonValue, path, kw string) (int, error) {
	if v.kind != jNumber {
		return 0, schemaErr(path, "%s must be a non-negative integer", kw)
	}
	r, ok := new(big.Rat).SetString(v.num)
	if !ok || !r.IsInt() || r.Sign() < 0 {
		return 0, schemaErr(path, "%s must be a non-negative integer", kw)
	}
	if !r.Num().IsInt64() || r.Num().Int64() > 1<<20 {
		return 1 << 20, nil // beyond any grammar we would build; callers cap
	}
	return int(r.Num().Int64()), nil
}

// compile returns the grammar of the JSON texts valid against schema s.
func (c *schemaCompiler) compile(s *jsonValue, path string) (*Expr, error) {
	if c.depth > maxSchemaDepth {
		return nil, fmt.Errorf("grammar: schema at %q nested deeper than %d: %w", pathOrRoot(path), maxSchemaDepth, ErrTooLarge)
	}
	if err := c.checkRules(path); err != nil {
		return nil, err
	}
	if err := c.step(path); err != nil {
		return nil, err
	}
	c.depth++
	defer func() { c.depth-- }()
	switch s.kind {
	case jBool:
		if s.b {
			return c.anyValue(), nil
		}
		return Never(), nil
	case jObject:
	default:
		return nil, schemaErr(path, "a schema must be an object or a boolean, not %s", s.kind)
	}
	if err := c.checkKeywords(s, path); err != nil {
		return nil, err
	}
	if s.get("allOf") != nil || s.get("$ref") != nil && constraining(s, "$ref") || hasRewritten(s) || hasUneval(s) {
		merged, err := c.flatten(s, path)
		if err != nil {
			return nil, err
		}
		if merged == nil {
			return Never(), nil
		}
		return c.compile(merged, path)
	}
	if r := s.get("$ref"); r != nil {
		rule, err := c.refRule(r, path)
		if err != nil {
			return nil, err
		}
		return Ref(rule), nil
	}
	if a := s.get("anyOf"); a != nil {
		return c.compileAnyOf(s, a, path, "anyOf")
	}
	if a := s.get("oneOf"); a != nil {
		return c.compileAnyOf(s, a, path, "oneOf")
	}
	if s.get("enum") != nil || s.get("const") != nil {
		return c.compileEnum(s, path)
	}
	types, err := declaredTypes(s, path)
	if err != nil {
		return nil, err
	}
	var alts []*Expr
	if types&tNull != 0 {
		alts = append(alts, Lit("null"))
	}
	if types&tBool != 0 {
		alts = append(alts, Lit("true"), Lit("false"))
	}
	if types&tNumber == tFraction {
		e, err := c.fractionExpr(s, path)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	} else if types&tNumber != 0 {
		e, err := c.numberExpr(s, path, types&tFraction == 0)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	}
	if types&tString != 0 {
		e, err := c.stringExpr(s, path)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	}
	if types&tArray != 0 {
		e, err := c.arrayExpr(s, path)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	}
	if types&tObject != 0 {
		e, err := c.objectExpr(s, path)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	}
	if len(alts) == 0 {
		return Never(), nil
	}
	return Alt(alts...), nil
}

// resolve returns the schema a local $ref points to.
func (c *schemaCompiler) resolve(ref *jsonValue, path string) (*jsonValue, string, error) {
	if ref.kind != jString {
		return nil, "", schemaErr(path, "$ref must be a string")
	}
	r := ref.str
	if !strings.HasPrefix(r, "#") {
		return nil, "", unsupported(path, "$ref", fmt.Sprintf("only local references (#/...) are supported, not %q", r))
	}
	frag := r[1:]
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, "", unsupported(path, "$ref", fmt.Sprintf("anchor references (%q) are not supported", r))
	}
	target := c.doc
	ptr := ""
	if frag != "" {
		for _, tok := range strings.Split(frag[1:], "/") {
			tok, err := unescapePointer(tok)
			if err != nil {
				return nil, "", schemaErr(path, "$ref %q: %v", r, err)
			}
			ptr = childPath(ptr, tok)
			switch target.kind {
			case jObject:
				target = target.get(tok)
			case jArray:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(target.arr) || (len(tok) > 1 && tok[0] == '0') {
					target = nil
				} else {
					target = target.arr[i]
				}
			default:
				target = nil
			}
			if target == nil {
				return nil, "", schemaErr(path, "$ref %q points to nothing", r)
			}
		}
	}
	return target, ptr, nil
}

func unescapePointer(tok string) (string, error) {
	// Percent-decoding first (the fragment is a URI fragment), then ~1 ~0.
	if strings.Contains(tok, "%") {
		var b strings.Builder
		for i := 0; i < len(tok); i++ {
			if tok[i] == '%' {
				if i+2 >= len(tok) {
					return "", fmt.Errorf("bad percent escape")
				}
				v, err := strconv.ParseUint(tok[i+1:i+3], 16, 8)
				if err != nil {
					return "", fmt.Errorf("bad percent escape")
				}
				b.WriteByte(byte(v))
				i += 2
				continue
			}
			b.WriteByte(tok[i])
		}
		tok = b.String()
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] == '~' && (i+1 >= len(tok) || tok[i+1] != '0' && tok[i+1] != '1') {
			return "", fmt.Errorf("bad ~ escape in JSON pointer")
		}
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"), nil
}

// refRule returns the rule of the schema a $ref points to, compiling it on
// first use (a rule per target makes recursion work).
func (c *schemaCompiler) refRule(ref *jsonValue, path string) (int, error) {
	target, ptr, err := c.resolve(ref, path)
	if err != nil {
		return 0, err
	}
	if i, ok := c.refs[ptr]; ok {
		return i, nil
	}
	i := c.newRule("ref" + strings.ReplaceAll(ptr, "/", "-"))
	c.refs[ptr] = i
	body, err := c.compile(target, ptr)
	if err != nil {
		return 0, err
	}
	c.g.Rules[i].Body = body
	return i, nil
}

// compileAnyOf compiles anyOf (or oneOf, when its alternatives are disjoint)
// with the sibling keywords merged into each alternative.
func (c *schemaCompiler) compileAnyOf(s, a *jsonValue, path, kw string) (*Expr, error) {
	if a.kind != jArray || len(a.arr) == 0 {
		return nil, schemaErr(path, "%s must be a non-empty array", kw)
	}
	rest := without(s, kw)
	var branches []*jsonValue
	for _, alt := range a.arr {
		m, err := c.merge(rest, alt, path, 0)
		if err != nil {
			return nil, err
		}
		branches = append(branches, m) // nil: a branch nothing satisfies
	}
	if kw == "oneOf" {
		overlap := false
	pairs:
		for i := range branches {
			for j := i + 1; j < len(branches); j++ {
				if branches[i] == nil || branches[j] == nil {
					continue
				}
				d, err := c.disjoint(branches[i], branches[j], path)
				if err != nil {
					return nil, err
				}
				if !d {
					overlap = true
					break pairs
				}
			}
		}
		if overlap {
			// Alternatives that may overlap: each joined with the
			// complements of the others (with the siblings merged in).
			var live []*jsonValue
			for _, b := range branches {
				if b != nil {
					live = append(live, b)
				}
			}
			dis, err := c.oneOfByNegation(live, path)
			if err != nil {
				return nil, err
			}
			branches = dis
		}
	}
	var alts []*Expr
	for i, b := range branches {
		if b == nil {
			continue
		}
		e, err := c.compile(b, childPath(path, kw, strconv.Itoa(i)))
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	}
	if len(alts) == 0 {
		return Never(), nil
	}
	return Alt(alts...), nil
}

// errUnsat marks a merge whose result nothing satisfies.
var errUnsat = errors.New("unsatisfiable")

// enumOrderBudget bounds the member orders tried per enum value.
const enumOrderBudget = 10000

// compileEnum compiles enum / const: the listed values that also satisfy
// the sibling keywords, each as a literal.
func (c *schemaCompiler) compileEnum(s *jsonValue, path string) (*Expr, error) {
	s = constToEnum(s)
	e := s.get("enum")
	if e.kind != jArray {
		return nil, schemaErr(path, "enum must be an array")
	}
	rest := without(s, "enum")
	var texts []string
	if !constraining(rest, "type") {
		types, err := declaredTypes(rest, path)
		if err != nil {
			return nil, err
		}
		for _, v := range e.arr {
			if valueType(v)&types == 0 {
				continue
			}
			t, err := canonicalText(v, false)
			if err != nil {
				return nil, unsupported(path, "enum", err.Error())
			}
			texts = append(texts, t)
		}
	} else {
		// Keep the values the grammar of the other keywords accepts.
		sub := newSchemaCompiler(c.doc, c.opts)
		sub.depth = c.depth
		sub.steps = c.steps
		g, err := sub.compileRoot(rest, path)
		if err != nil {
			return nil, err
		}
		p, err := Compile(g)
		if err != nil {
			return nil, err
		}
		for _, v := range e.arr {
			if _, err := canonicalText(v, false); err != nil {
				return nil, unsupported(path, "enum", err.Error())
			}
			if t, ok := acceptedText(p, v, enumOrderBudget); ok {
				texts = append(texts, t)
			}
		}
	}
	if len(texts) == 0 {
		return Never(), nil
	}
	alts := make([]*Expr, len(texts))
	for i, t := range texts {
		alts[i] = Lit(t)
	}
	return Alt(alts...), nil
}
