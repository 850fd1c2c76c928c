package grammar

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
)

// Negation: "not", the condition of if/then/else and oneOf alternatives
// that may overlap are compiled by writing the complement of a schema as a
// schema again (the grammar has no complement). A schema is the conjunction
// of its keywords, so its complement is the union (anyOf) of the instances
// violating each keyword, and each keyword's violations are a schema of the
// same vocabulary: minimum m is violated by the numbers below m, required
// [a] by the objects without a, properties {p: S} by the objects whose p
// fails S (complemented recursively), items S by the arrays that contain
// an element failing S, enum by the values outside it (other types, other
// strings, numbers in the open intervals between the listed ones). A
// keyword without such a complement (pattern, format, uniqueItems,
// additionalProperties beside properties, oneOf) makes "not" unsupported.

// Internal keywords: negation needs two constraints the JSON Schema
// vocabulary cannot state. Their names start with a NUL byte, which no
// schema author writes (a schema could spell one with \u0000: it would
// then constrain as documented here, never loosen).
const (
	// kwTypes holds a type bit set (tNull...tFraction) the instance must
	// belong to: "number but not integer" is not a "type" value.
	kwTypes = "\x00types"
	// kwNotIn holds an array of strings a string instance must differ from.
	kwNotIn = "\x00notIn"
	// kwPatterns holds more patterns a string must match (allOf of
	// different patterns), kwNotPatterns patterns it must not match.
	kwPatterns    = "\x00patterns"
	kwNotPatterns = "\x00notPatterns"
)

// maxNegationDepth bounds how deep negation recurses into subschemas (a
// recursive $ref under "not" would not end).
const maxNegationDepth = 16

// maxOneOfNegated bounds the alternatives of a oneOf compiled through
// negation (each alternative is joined with the complements of the others).
const maxOneOfNegated = 8

func jObj(members ...jsonMember) *jsonValue { return &jsonValue{kind: jObject, obj: members} }
func jArr(vs ...*jsonValue) *jsonValue      { return &jsonValue{kind: jArray, arr: vs} }
func jStr(s string) *jsonValue              { return &jsonValue{kind: jString, str: s} }
func jBoolean(b bool) *jsonValue            { return &jsonValue{kind: jBool, b: b} }
func jInt(n int) *jsonValue                 { return &jsonValue{kind: jNumber, num: strconv.Itoa(n)} }
func jRat(r *big.Rat) *jsonValue            { return &jsonValue{kind: jNumber, num: ratDecimal(r)} }
func jTypes(bits uint8) jsonMember {
	return jsonMember{kwTypes, &jsonValue{kind: jNumber, num: strconv.Itoa(int(bits))}}
}

// isFalseSchema reports whether s is the schema false (or an anyOf of nothing).
func isFalseSchema(s *jsonValue) bool { return s.kind == jBool && !s.b }

// negate returns a schema that accepts exactly the instances s rejects, or
// an UnsupportedError for the keyword "not" naming what has no complement.
func (c *schemaCompiler) negate(s *jsonValue, path string, depth int) (*jsonValue, error) {
	if depth > maxNegationDepth {
		return nil, unsupported(path, "not", "negation nested too deep (a recursive reference under not)")
	}
	if err := c.step(path); err != nil {
		return nil, err
	}
	switch s.kind {
	case jBool:
		return jBoolean(!s.b), nil
	case jObject:
	default:
		return nil, schemaErr(path, "a schema must be an object or a boolean, not %s", s.kind)
	}
	x, err := c.expand(s, path, depth)
	if err != nil {
		return nil, err
	}
	if x == nil { // nothing satisfies s
		return jBoolean(true), nil
	}
	if x.kind == jBool {
		return jBoolean(!x.b), nil
	}
	x = constToEnum(x)
	var pieces []*jsonValue
	add := func(p *jsonValue) {
		if !isFalseSchema(p) {
			pieces = append(pieces, p)
		}
	}
	no := func(kw, why string) error {
		r := fmt.Sprintf("the complement of %s is not built", kw)
		if why != "" {
			r += " (" + why + ")"
		}
		return unsupported(path, "not", r)
	}
	for _, m := range x.obj {
		k, v := m.key, m.val
		if !internalKeyword(k) && (ignoredKeyword(x, k) || k == "$id") {
			continue
		}
		switch k {
		case "type", kwTypes:
			var bits uint8
			if k == "type" {
				bits, err = declaredTypes(jObj(m), path)
			} else {
				bits, err = typeBits(v, path)
			}
			if err != nil {
				return nil, err
			}
			if rest := tAll &^ bits; rest != 0 {
				add(jObj(jTypes(rest)))
			}
		case "enum":
			ps, err := notEnum(v, path)
			if err != nil {
				return nil, err
			}
			pieces = append(pieces, ps...)
		case kwNotIn:
			add(jObj(jTypes(tString), jsonMember{"enum", v}))
		case "pattern":
			if v.kind != jString {
				return nil, schemaErr(path, "pattern must be a string")
			}
			add(jObj(jTypes(tString), jsonMember{kwNotPatterns, jArr(v)}))
		case kwPatterns:
			for _, p := range v.arr {
				add(jObj(jTypes(tString), jsonMember{kwNotPatterns, jArr(p)}))
			}
		case kwNotPatterns:
			for _, p := range v.arr {
				add(jObj(jTypes(tString), jsonMember{"pattern", p}))
			}
		case "format":
			// Not negated: kiln asserts the formats it knows, while
			// draft 2020-12 reads format as an annotation by default, so
			// "not format" would accept what the annotation reading
			// (not {} : nothing) rejects. Refused, fail closed.
			if v.kind == jString && formatExpr(v.str) == nil {
				continue // a format kiln does not know: an annotation
			}
			return nil, no(k, "kiln asserts formats, the specification's default reads them as annotations")
		case "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum":
			if v.kind != jNumber {
				return nil, schemaErr(path, "%s must be a number", k)
			}
			opposite := map[string]string{"minimum": "exclusiveMaximum", "exclusiveMinimum": "maximum",
				"maximum": "exclusiveMinimum", "exclusiveMaximum": "minimum"}[k]
			add(jObj(jTypes(tNumber), jsonMember{opposite, v}))
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
			n, err := nonNegInt(v, path, k)
			if err != nil {
				return nil, err
			}
			t := map[byte]uint8{'L': tString, 'I': tArray, 'P': tObject}[k[3]]
			if k[:3] == "min" {
				if n > 0 {
					add(jObj(jTypes(t), jsonMember{"max" + k[3:], jInt(n - 1)}))
				}
			} else {
				add(jObj(jTypes(t), jsonMember{"min" + k[3:], jInt(n + 1)}))
			}
		case "required":
			if v.kind != jArray {
				return nil, schemaErr(path, "required must be an array")
			}
			for _, r := range v.arr {
				if r.kind != jString {
					return nil, schemaErr(path, "required must hold strings")
				}
				add(jObj(jTypes(tObject), jsonMember{"properties", jObj(jsonMember{r.str, jBoolean(false)})}, jsonMember{"additionalProperties", jBoolean(true)}))
			}
		case "properties":
			if v.kind != jObject {
				return nil, schemaErr(path, "properties must be an object")
			}
			for _, p := range v.obj {
				n, err := c.negate(p.val, childPath(path, "properties", p.key), depth+1)
				if err != nil {
					return nil, err
				}
				if isFalseSchema(n) {
					continue
				}
				add(jObj(jTypes(tObject), jsonMember{"required", jArr(jStr(p.key))},
					jsonMember{"properties", jObj(jsonMember{p.key, n})}, jsonMember{"additionalProperties", jBoolean(true)}))
			}
		case "additionalProperties":
			if !(v.kind == jBool && v.b) {
				return nil, no(k, "")
			}
		case "items":
			if x.get("prefixItems") != nil {
				if v.kind == jBool && v.b {
					continue
				}
				return nil, no(k, "beside prefixItems")
			}
			n, err := c.negate(v, childPath(path, "items"), depth+1)
			if err != nil {
				return nil, err
			}
			if !isFalseSchema(n) {
				add(jObj(jTypes(tArray), jsonMember{"contains", n}))
			}
		case "prefixItems":
			if v.kind != jArray {
				return nil, schemaErr(path, "prefixItems must be an array")
			}
			for i, it := range v.arr {
				n, err := c.negate(it, childPath(path, "prefixItems", strconv.Itoa(i)), depth+1)
				if err != nil {
					return nil, err
				}
				if isFalseSchema(n) {
					continue
				}
				pre := jArr()
				for range i {
					pre.arr = append(pre.arr, jBoolean(true))
				}
				pre.arr = append(pre.arr, n)
				add(jObj(jTypes(tArray), jsonMember{"minItems", jInt(i + 1)}, jsonMember{"prefixItems", pre}))
			}
		case "contains":
			minC, maxC, hasMax, err := containsCounts(x, path)
			if err != nil {
				return nil, err
			}
			if minC > 0 {
				add(jObj(jTypes(tArray), jsonMember{"contains", v}, jsonMember{"minContains", jInt(0)}, jsonMember{"maxContains", jInt(minC - 1)}))
			}
			if hasMax {
				add(jObj(jTypes(tArray), jsonMember{"contains", v}, jsonMember{"minContains", jInt(maxC + 1)}))
			}
		case "minContains", "maxContains":
			// With contains, above.
		case "uniqueItems":
			if v.kind == jBool && v.b {
				return nil, no(k, "")
			}
		case "anyOf":
			if v.kind != jArray || len(v.arr) == 0 {
				return nil, schemaErr(path, "anyOf must be a non-empty array")
			}
			all := jArr()
			for i, a := range v.arr {
				n, err := c.negate(a, childPath(path, "anyOf", strconv.Itoa(i)), depth+1)
				if err != nil {
					return nil, err
				}
				all.arr = append(all.arr, n)
			}
			add(jObj(jsonMember{"allOf", all}))
		default:
			return nil, no(k, "")
		}
	}
	switch len(pieces) {
	case 0:
		return jBoolean(false), nil
	case 1:
		return pieces[0], nil
	}
	return jObj(jsonMember{"anyOf", jArr(pieces...)}), nil
}

// typeBits reads the value of kwTypes.
func typeBits(v *jsonValue, path string) (uint8, error) {
	n, err := strconv.Atoi(v.num)
	if v.kind != jNumber || err != nil || n < 0 || n > int(tAll) {
		return 0, schemaErr(path, "bad internal type set")
	}
	return uint8(n), nil
}

// notEnum returns the schemas of the values outside an enum: the other
// types, the other booleans, strings outside the set, the numbers in the
// open intervals around the listed ones. Objects and arrays in the enum
// have no such complement: refused.
func notEnum(e *jsonValue, path string) ([]*jsonValue, error) {
	if e.kind != jArray {
		return nil, schemaErr(path, "enum must be an array")
	}
	var types uint8
	hasTrue, hasFalse := false, false
	var strs []*jsonValue
	var nums []*big.Rat
	for _, v := range e.arr {
		switch v.kind {
		case jNull:
			types |= tNull
		case jBool:
			if v.b {
				hasTrue = true
			} else {
				hasFalse = true
			}
		case jString:
			strs = append(strs, v)
		case jNumber:
			if _, err := canonicalNumber(v.num); err != nil {
				return nil, unsupported(path, "not", err.Error())
			}
			r, _ := new(big.Rat).SetString(v.num)
			nums = append(nums, r)
		default:
			return nil, unsupported(path, "not", "the complement of an enum or const holding objects or arrays is not built")
		}
	}
	if hasTrue && hasFalse {
		types |= tBool
	}
	if len(strs) > 0 {
		types |= tString
	}
	if len(nums) > 0 {
		types |= tNumber
	}
	var out []*jsonValue
	if rest := tAll &^ types; rest != 0 {
		out = append(out, jObj(jTypes(rest)))
	}
	if hasTrue != hasFalse {
		out = append(out, jObj(jsonMember{"enum", jArr(jBoolean(!hasTrue))}))
	}
	if len(strs) > 0 {
		out = append(out, jObj(jTypes(tString), jsonMember{kwNotIn, jArr(strs...)}))
	}
	if len(nums) > 0 {
		sort.Slice(nums, func(i, j int) bool { return nums[i].Cmp(nums[j]) < 0 })
		nums = slices.CompactFunc(nums, func(a, b *big.Rat) bool { return a.Cmp(b) == 0 })
		num := jTypes(tNumber)
		out = append(out, jObj(num, jsonMember{"exclusiveMaximum", jRat(nums[0])}))
		for i := 1; i < len(nums); i++ {
			out = append(out, jObj(num, jsonMember{"exclusiveMinimum", jRat(nums[i-1])}, jsonMember{"exclusiveMaximum", jRat(nums[i])}))
		}
		out = append(out, jObj(num, jsonMember{"exclusiveMinimum", jRat(nums[len(nums)-1])}))
	}
	return out, nil
}

// containsCounts reads minContains (default 1) and maxContains of a schema
// with contains.
func containsCounts(s *jsonValue, path string) (minC, maxC int, hasMax bool, err error) {
	minC = 1
	if v := s.get("minContains"); v != nil {
		if minC, err = nonNegInt(v, path, "minContains"); err != nil {
			return
		}
	}
	if v := s.get("maxContains"); v != nil {
		if maxC, err = nonNegInt(v, path, "maxContains"); err != nil {
			return
		}
		hasMax = true
	}
	return
}

// internalKeyword reports whether k is one of the compiler's own keywords.
func internalKeyword(k string) bool { return k != "" && k[0] == 0 }
