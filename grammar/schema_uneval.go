package grammar

import (
	"fmt"
	"strconv"
)

// unevaluatedProperties / unevaluatedItems are compiled by rewriting the
// schema that holds them as a union of conjunctions whose evaluated
// locations are known statically, each joined with a schema that applies
// the unevaluated keyword where nothing else evaluates:
//
//   - The schema's in-place applicators are distributed: allOf members and
//     $ref targets join every alternative; anyOf contributes each nonempty
//     subset of its members (the members that pass all evaluate: a subset
//     stands for "at least these pass"); oneOf member i joined with "not"
//     of the others; if/then/else as (if, then) or (not if, else);
//     dependentSchemas {a: D} as "a absent" or (a present, D). Schemas under
//     "not" (and the conditions that failed) evaluate nothing.
//   - In each conjunction the evaluated property names are those of the
//     "properties" of the parts that evaluate, every name when one has
//     additionalProperties (or an unevaluatedProperties of its own), and
//     the keys their patternProperties match; the evaluated items are the
//     longest prefixItems, every item when one has items, and the items
//     that match a contains.
//   - The conjunction gets one more member: {properties: {evaluated: true},
//     patternProperties: {evaluated: true}, additionalProperties: U} for
//     unevaluatedProperties U; {prefixItems: [true × evaluated], items:
//     anyOf [contains…, U]} for unevaluatedItems U.
//
// An instance passes the original schema iff it passes one alternative:
// the alternative of the members that pass evaluates exactly what they do.

// maxUnevalSubsets bounds the anyOf members distributed as subsets (2^n-1
// alternatives).
const maxUnevalSubsets = 4

type unevalPart struct {
	s     *jsonValue
	eval  bool // its properties/items count as evaluated
	props bool // it evaluates every property
	items bool // it evaluates every item
}

type unevalAlt []unevalPart

func hasUneval(s *jsonValue) bool {
	return s.kind == jObject && (s.get("unevaluatedProperties") != nil || s.get("unevaluatedItems") != nil)
}

// rewriteUneval returns s without its unevaluated keywords, as described
// above.
func (c *schemaCompiler) rewriteUneval(s *jsonValue, path string, depth int) (*jsonValue, error) {
	up, ui := s.get("unevaluatedProperties"), s.get("unevaluatedItems")
	alts, err := c.unevalAlts(without(s, "unevaluatedProperties", "unevaluatedItems"), path, depth)
	if err != nil {
		return nil, err
	}
	var out []*jsonValue
	for _, a := range alts {
		all := jArr()
		var names, pats []string
		var contains []*jsonValue
		seen, seenPat := map[string]bool{}, map[string]bool{}
		allProps, allItems, prefix := false, false, 0
		for _, p := range a {
			all.arr = append(all.arr, p.s)
			if !p.eval {
				continue
			}
			allProps = allProps || p.props
			allItems = allItems || p.items
			if p.s.kind != jObject {
				continue
			}
			for _, m := range p.s.get("patternProperties").objMembers() {
				if !seenPat[m.key] {
					seenPat[m.key] = true
					pats = append(pats, m.key)
				}
			}
			if cs := p.s.get("contains"); cs != nil {
				// contains evaluates the items that match it.
				contains = append(contains, cs)
			}
			for _, m := range p.s.get("properties").objMembers() {
				if !seen[m.key] {
					seen[m.key] = true
					names = append(names, m.key)
				}
			}
			if pi := p.s.get("prefixItems"); pi != nil && pi.kind == jArray {
				prefix = max(prefix, len(pi.arr))
			}
		}
		if up != nil && !allProps {
			props := jObj()
			for _, n := range names {
				props.obj = append(props.obj, jsonMember{n, jBoolean(true)})
			}
			part := jObj(jsonMember{"properties", props}, jsonMember{"additionalProperties", up})
			if len(pats) > 0 {
				pp := jObj()
				for _, p := range pats {
					pp.obj = append(pp.obj, jsonMember{p, jBoolean(true)})
				}
				part.obj = append(part.obj, jsonMember{"patternProperties", pp})
			}
			all.arr = append(all.arr, part)
		}
		if ui != nil && !allItems {
			pre := jArr()
			for range prefix {
				pre.arr = append(pre.arr, jBoolean(true))
			}
			rest := ui
			if len(contains) > 0 {
				// An item past the prefix is evaluated when it matches a
				// contains; otherwise unevaluatedItems applies to it.
				rest = jObj(jsonMember{"anyOf", jArr(append(append([]*jsonValue{}, contains...), ui)...)})
			}
			part := jObj(jsonMember{"items", rest})
			if prefix > 0 {
				part.obj = append(part.obj, jsonMember{"prefixItems", pre})
			}
			all.arr = append(all.arr, part)
		}
		out = append(out, jObj(jsonMember{"allOf", all}))
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return jObj(jsonMember{"anyOf", jArr(out...)}), nil
}

// unevalAlts distributes s's in-place applicators (see above).
func (c *schemaCompiler) unevalAlts(s *jsonValue, path string, depth int) ([]unevalAlt, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("grammar: schema at %q nested deeper than %d: %w", pathOrRoot(path), maxSchemaDepth, ErrTooLarge)
	}
	if err := c.step(path); err != nil {
		return nil, err
	}
	if s.kind == jBool {
		return []unevalAlt{{{s: s, eval: true}}}, nil
	}
	if s.kind != jObject {
		return nil, schemaErr(path, "a schema must be an object or a boolean, not %s", s.kind)
	}
	if hasUneval(s) {
		// Its own unevaluated keywords evaluate every property / item.
		r, err := c.rewriteUneval(s, path, depth+1)
		if err != nil {
			return nil, err
		}
		return []unevalAlt{{{s: r, eval: true, props: s.get("unevaluatedProperties") != nil, items: s.get("unevaluatedItems") != nil}}}, nil
	}
	flat := without(s, "allOf", "$ref", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies")
	own := unevalPart{s: flat, eval: true, props: s.get("additionalProperties") != nil, items: s.get("items") != nil && s.get("items").kind != jArray}
	alts := []unevalAlt{{own}}
	join := func(more []unevalAlt) error {
		if len(alts)*len(more) > maxMergeAlts {
			return fmt.Errorf("grammar: unevaluated keywords at %q need more than %d alternatives: %w", pathOrRoot(path), maxMergeAlts, ErrTooLarge)
		}
		var next []unevalAlt
		for _, a := range alts {
			for _, b := range more {
				next = append(next, append(append(unevalAlt{}, a...), b...))
			}
		}
		alts = next
		return nil
	}
	noEval := func(x *jsonValue) []unevalAlt { return []unevalAlt{{{s: x}}} }
	var members []*jsonValue
	if r := s.get("$ref"); r != nil {
		t, ptr, err := c.resolve(r, path)
		if err != nil {
			return nil, err
		}
		more, err := c.unevalAlts(t, ptr, depth+1)
		if err != nil {
			return nil, err
		}
		if err := join(more); err != nil {
			return nil, err
		}
	}
	if a := s.get("allOf"); a != nil {
		if a.kind != jArray {
			return nil, schemaErr(path, "allOf must be an array")
		}
		members = a.arr
	}
	for i, m := range members {
		more, err := c.unevalAlts(m, childPath(path, "allOf", strconv.Itoa(i)), depth+1)
		if err != nil {
			return nil, err
		}
		if err := join(more); err != nil {
			return nil, err
		}
	}
	if a := s.get("anyOf"); a != nil {
		if a.kind != jArray || len(a.arr) == 0 {
			return nil, schemaErr(path, "anyOf must be a non-empty array")
		}
		if len(a.arr) > maxUnevalSubsets {
			return nil, unsupported(path, "anyOf", fmt.Sprintf("more than %d alternatives beside unevaluated keywords", maxUnevalSubsets))
		}
		each := make([][]unevalAlt, len(a.arr))
		for i, m := range a.arr {
			var err error
			if each[i], err = c.unevalAlts(m, childPath(path, "anyOf", strconv.Itoa(i)), depth+1); err != nil {
				return nil, err
			}
		}
		var union []unevalAlt
		for mask := 1; mask < 1<<len(a.arr); mask++ {
			sub := []unevalAlt{{}}
			for i := range a.arr {
				if mask&(1<<i) == 0 {
					continue
				}
				var next []unevalAlt
				for _, x := range sub {
					for _, y := range each[i] {
						next = append(next, append(append(unevalAlt{}, x...), y...))
					}
				}
				sub = next
			}
			union = append(union, sub...)
		}
		if err := join(union); err != nil {
			return nil, err
		}
	}
	if a := s.get("oneOf"); a != nil {
		if a.kind != jArray || len(a.arr) == 0 {
			return nil, schemaErr(path, "oneOf must be a non-empty array")
		}
		var union []unevalAlt
		for i, m := range a.arr {
			mine, err := c.unevalAlts(m, childPath(path, "oneOf", strconv.Itoa(i)), depth+1)
			if err != nil {
				return nil, err
			}
			var others unevalAlt
			for j, o := range a.arr {
				if j != i {
					others = append(others, unevalPart{s: jObj(jsonMember{"not", o})})
				}
			}
			for _, x := range mine {
				union = append(union, append(append(unevalAlt{}, x...), others...))
			}
		}
		if err := join(union); err != nil {
			return nil, err
		}
	}
	if n := s.get("not"); n != nil {
		if err := join(noEval(jObj(jsonMember{"not", n}))); err != nil {
			return nil, err
		}
	}
	if i := s.get("if"); i != nil && (s.get("then") != nil || s.get("else") != nil) {
		t, e := s.get("then"), s.get("else")
		if t == nil {
			t = jBoolean(true)
		}
		if e == nil {
			e = jBoolean(true)
		}
		ia, err := c.unevalAlts(i, childPath(path, "if"), depth+1)
		if err != nil {
			return nil, err
		}
		ta, err := c.unevalAlts(t, childPath(path, "then"), depth+1)
		if err != nil {
			return nil, err
		}
		ea, err := c.unevalAlts(e, childPath(path, "else"), depth+1)
		if err != nil {
			return nil, err
		}
		var union []unevalAlt
		for _, x := range ia {
			for _, y := range ta {
				union = append(union, append(append(unevalAlt{}, x...), y...))
			}
		}
		for _, y := range ea {
			union = append(union, append(unevalAlt{{s: jObj(jsonMember{"not", i})}}, y...))
		}
		if err := join(union); err != nil {
			return nil, err
		}
	} else if i != nil {
		// if alone asserts nothing, but when it passes it evaluates.
		ia, err := c.unevalAlts(i, childPath(path, "if"), depth+1)
		if err != nil {
			return nil, err
		}
		union := append([]unevalAlt{}, ia...)
		union = append(union, noEval(jObj(jsonMember{"not", i}))...)
		if err := join(union); err != nil {
			return nil, err
		}
	}
	for _, kw := range []string{"dependentSchemas", "dependencies"} {
		d := s.get(kw)
		if d == nil {
			continue
		}
		if d.kind != jObject {
			return nil, schemaErr(path, "%s must be an object", kw)
		}
		for _, m := range d.obj {
			if kw == "dependencies" && m.val.kind == jArray {
				if err := join(noEval(jObj(jsonMember{"dependentRequired", jObj(m)}))); err != nil {
					return nil, err
				}
				continue
			}
			da, err := c.unevalAlts(m.val, childPath(path, kw, m.key), depth+1)
			if err != nil {
				return nil, err
			}
			union := noEval(jObj(jsonMember{"properties", jObj(jsonMember{m.key, jBoolean(false)})}))
			for _, y := range da {
				union = append(union, append(unevalAlt{{s: jObj(jsonMember{"required", jArr(jStr(m.key))})}}, y...))
			}
			if err := join(union); err != nil {
				return nil, err
			}
		}
	}
	return alts, nil
}
