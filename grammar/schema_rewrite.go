package grammar

import (
	"fmt"
	"strconv"
)

// Conditional keywords compiled by rewriting them as allOf members (which
// expand then merges into the schema):
//
//	not S                        → the complement of S (schema_not.go)
//	if I then T else E           → anyOf [allOf [I, T], allOf [¬I, E]]
//	                               (the two alternatives are disjoint)
//	dependentRequired {a: [b…]}  → anyOf [a absent, required [a, b…]]
//	dependentSchemas {a: D}      → anyOf [a absent, allOf [required [a], D]]
//	dependencies (drafts 4-7)    → dependentRequired for an array,
//	                               dependentSchemas for a schema
//
// "a absent" is properties {a: false}: it constrains objects only, as the
// keywords do. A missing then or else is true.

// rewrittenKeywords are the keywords expand replaces by allOf members.
var rewrittenKeywords = []string{"not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies"}

// hasRewritten reports whether s holds a keyword expand rewrites.
func hasRewritten(s *jsonValue) bool {
	if s.kind != jObject {
		return false
	}
	for _, k := range []string{"not", "if", "dependentRequired", "dependentSchemas", "dependencies"} {
		if s.get(k) != nil {
			return true
		}
	}
	return false
}

// conditionalParts returns the allOf members that stand for s's
// conditional keywords.
func (c *schemaCompiler) conditionalParts(s *jsonValue, path string, depth int) ([]*jsonValue, error) {
	var parts []*jsonValue
	if n := s.get("not"); n != nil {
		x, err := c.negate(n, childPath(path, "not"), depth+1)
		if err != nil {
			return nil, err
		}
		parts = append(parts, x)
	}
	if i := s.get("if"); i != nil {
		t, e := s.get("then"), s.get("else")
		if t != nil || e != nil {
			if t == nil {
				t = jBoolean(true)
			}
			if e == nil {
				e = jBoolean(true)
			}
			ni, err := c.negate(i, childPath(path, "if"), depth+1)
			if err != nil {
				var ue *UnsupportedError
				if asUnsupported(err, &ue) {
					return nil, unsupported(path, "if", "its condition has no complement: "+ue.Reason)
				}
				return nil, err
			}
			parts = append(parts, jObj(jsonMember{"anyOf", jArr(
				jObj(jsonMember{"allOf", jArr(i, t)}),
				jObj(jsonMember{"allOf", jArr(ni, e)}),
			)}))
		}
	}
	absent := func(name string) *jsonValue {
		return jObj(jsonMember{"properties", jObj(jsonMember{name, jBoolean(false)})})
	}
	depReq := func(kw, name string, v *jsonValue) error {
		if v.kind != jArray {
			return schemaErr(path, "%s/%s must be an array of strings", kw, name)
		}
		req := jArr(jStr(name))
		for _, x := range v.arr {
			if x.kind != jString {
				return schemaErr(path, "%s/%s must be an array of strings", kw, name)
			}
			req.arr = append(req.arr, x)
		}
		parts = append(parts, jObj(jsonMember{"anyOf", jArr(absent(name), jObj(jsonMember{"required", req}))}))
		return nil
	}
	depSchema := func(kw, name string, v *jsonValue) error {
		if v.kind != jObject && v.kind != jBool {
			return schemaErr(path, "%s/%s must be a schema", kw, name)
		}
		if v.kind == jBool && v.b {
			return nil
		}
		present := jObj(jsonMember{"allOf", jArr(jObj(jsonMember{"required", jArr(jStr(name))}), v)})
		parts = append(parts, jObj(jsonMember{"anyOf", jArr(absent(name), present)}))
		return nil
	}
	for _, kw := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		d := s.get(kw)
		if d == nil {
			continue
		}
		if d.kind != jObject {
			return nil, schemaErr(path, "%s must be an object", kw)
		}
		if len(d.obj) > 6 {
			return nil, fmt.Errorf("grammar: %s at %q has more than 6 entries (each doubles the alternatives): %w", kw, pathOrRoot(path), ErrTooLarge)
		}
		for _, m := range d.obj {
			var err error
			switch {
			case kw == "dependentRequired", kw == "dependencies" && m.val.kind == jArray:
				err = depReq(kw, m.key, m.val)
			default:
				err = depSchema(kw, m.key, m.val)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return parts, nil
}

// oneOfByNegation returns the alternatives of a oneOf whose alternatives
// may overlap as disjoint ones: alternative i joined with the complement
// of every other, so that an instance matching two matches none.
func (c *schemaCompiler) oneOfByNegation(alts []*jsonValue, path string) ([]*jsonValue, error) {
	if len(alts) > maxOneOfNegated {
		return nil, unsupported(path, "oneOf", fmt.Sprintf("alternatives that may overlap, more than %d of them", maxOneOfNegated))
	}
	neg := make([]*jsonValue, len(alts))
	for i, a := range alts {
		n, err := c.negate(a, childPath(path, "oneOf", strconv.Itoa(i)), 1)
		if err != nil {
			var ue *UnsupportedError
			if asUnsupported(err, &ue) {
				return nil, unsupported(path, "oneOf", fmt.Sprintf("alternatives that may overlap, and alternative %d has no complement: %s", i, ue.Reason))
			}
			return nil, err
		}
		neg[i] = n
	}
	out := make([]*jsonValue, len(alts))
	for i, a := range alts {
		all := jArr(a)
		for j := range alts {
			if j != i {
				all.arr = append(all.arr, neg[j])
			}
		}
		out[i] = jObj(jsonMember{"allOf", all})
	}
	return out, nil
}
