package grammar

import (
	"fmt"
	"math/big"
	"slices"
)

// allOf and $ref-with-siblings are compiled by merging the schemas into one
// (the grammar has no intersection). The merge is exact keyword by keyword:
// types intersect, required lists join, bounds take the tighter value, enums
// intersect, subschemas of the same property (or items) become an allOf of
// both, and a property declared on one side only gets the other side's
// additionalProperties too (that is what additionalProperties means there).
// Combinations without an exact merge (two different patterns, two oneOf,
// two different prefixItems) are UnsupportedErrors.

// flatten merges s's allOf members and $ref target into s.
func (c *schemaCompiler) flatten(s *jsonValue, path string) (*jsonValue, error) {
	return c.expand(s, path, 0)
}

// expand returns s with its own allOf and $ref folded in (nil: unsatisfiable).
func (c *schemaCompiler) expand(s *jsonValue, path string, depth int) (*jsonValue, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("grammar: allOf/$ref at %q expand deeper than %d: %w", pathOrRoot(path), maxSchemaDepth, ErrTooLarge)
	}
	if s.kind == jObject && hasUneval(s) {
		if err := c.checkKeywords(s, path); err != nil {
			return nil, err
		}
		r, err := c.rewriteUneval(s, path, depth+1)
		if err != nil {
			return nil, err
		}
		s = r
	}
	if s.kind != jObject || s.get("allOf") == nil && s.get("$ref") == nil && !hasRewritten(s) {
		return s, nil
	}
	if err := c.checkKeywords(s, path); err != nil {
		return nil, err
	}
	out := without(s, append([]string{"allOf", "$ref"}, rewrittenKeywords...)...)
	parts, err := c.conditionalParts(s, path, depth)
	if err != nil {
		return nil, err
	}
	if r := s.get("$ref"); r != nil {
		t, _, err := c.resolve(r, path)
		if err != nil {
			return nil, err
		}
		parts = append(parts, t)
	}
	if a := s.get("allOf"); a != nil {
		if a.kind != jArray || len(a.arr) == 0 {
			return nil, schemaErr(path, "allOf must be a non-empty array")
		}
		parts = append(parts, a.arr...)
	}
	for _, p := range parts {
		if out, err = c.merge(out, p, path, depth+1); err != nil || out == nil {
			return nil, err
		}
	}
	return out, nil
}

// merge returns a schema equivalent to allOf [a, b] without allOf or $ref at
// its top, or nil when nothing satisfies it.
func (c *schemaCompiler) merge(a, b *jsonValue, path string, depth int) (*jsonValue, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("grammar: allOf/$ref at %q expand deeper than %d: %w", pathOrRoot(path), maxSchemaDepth, ErrTooLarge)
	}
	if err := c.step(path); err != nil {
		return nil, err
	}
	for _, x := range []*jsonValue{a, b} {
		if x.kind != jBool && x.kind != jObject {
			return nil, schemaErr(path, "a schema must be an object or a boolean, not %s", x.kind)
		}
		if x.kind == jBool && !x.b {
			return nil, nil
		}
	}
	var err error
	if a, err = c.expand(a, path, depth); err != nil || a == nil {
		return nil, err
	}
	if b, err = c.expand(b, path, depth); err != nil || b == nil {
		return nil, err
	}
	if a.kind == jBool {
		return b, nil
	}
	if b.kind == jBool {
		return a, nil
	}
	for _, x := range []*jsonValue{a, b} {
		if err := c.checkKeywords(x, path); err != nil {
			return nil, err
		}
	}
	a, b = constToEnum(a), constToEnum(b)
	out := &jsonValue{kind: jObject}
	set := func(k string, v *jsonValue) {
		for i := range out.obj {
			if out.obj[i].key == k {
				out.obj[i].val = v
				return
			}
		}
		out.obj = append(out.obj, jsonMember{k, v})
	}
	for _, m := range a.obj {
		if !(contextualKeyword(m.key) && ignoredKeyword(a, m.key)) {
			set(m.key, m.val)
		}
	}
	for _, m := range b.obj {
		k, vb := m.key, m.val
		va := a.get(k)
		if contextualKeyword(k) && ignoredKeyword(b, k) {
			continue // inert on its side; it must not act beside the other's
		}
		if contextualKeyword(k) && ignoredKeyword(a, k) {
			va = nil
		}
		if va == nil || ignoredKeyword(b, k) || k == "$id" {
			if va == nil {
				set(k, vb)
			}
			continue
		}
		switch k {
		case "type", kwTypes:
			ta, err := declaredTypes(a, path)
			if err != nil {
				return nil, err
			}
			tb, err := declaredTypes(b, path)
			if err != nil {
				return nil, err
			}
			set("type", typeValue(ta&tb))
			set(kwTypes, jObj(jTypes(ta & tb)).obj[0].val)
		case kwNotIn:
			if va.kind != jArray || vb.kind != jArray {
				return nil, schemaErr(path, "bad internal string exclusion")
			}
			set(k, jArr(append(slices.Clone(va.arr), vb.arr...)...))
		case "contains":
			ta, _ := canonicalText(va, true)
			tb, _ := canonicalText(vb, true)
			if ta != tb || !sameJSON(a.get("minContains"), b.get("minContains")) || !sameJSON(a.get("maxContains"), b.get("maxContains")) {
				return nil, unsupported(path, k, "contains in more than one allOf branch")
			}
		case "minContains", "maxContains":
			// Checked with contains.
		case "required":
			if va.kind != jArray || vb.kind != jArray {
				return nil, schemaErr(path, "required must be an array")
			}
			r := &jsonValue{kind: jArray, arr: slices.Clone(va.arr)}
			for _, x := range vb.arr {
				if !slices.ContainsFunc(r.arr, func(y *jsonValue) bool { return y.kind == jString && x.kind == jString && y.str == x.str }) {
					r.arr = append(r.arr, x)
				}
			}
			set(k, r)
		case "properties", "additionalProperties", "patternProperties":
			// Below, together.
		case "items", "prefixItems":
			// Below, together.
		case "pattern":
			// Both must match: the other joins kwPatterns (their automata
			// are intersected, stringByAutomaton).
			if !sameJSON(va, vb) {
				if vb.kind != jString {
					return nil, schemaErr(path, "pattern must be a string")
				}
				more := jArr(vb)
				if x := out.get(kwPatterns); x != nil {
					more.arr = append(slices.Clone(x.arr), vb)
				}
				set(kwPatterns, more)
			}
		case kwPatterns, kwNotPatterns:
			if va.kind != jArray || vb.kind != jArray {
				return nil, schemaErr(path, "bad internal pattern list")
			}
			set(k, jArr(append(slices.Clone(out.get(k).arr), vb.arr...)...))
		case "format":
			ta, _ := canonicalText(va, true)
			tb, _ := canonicalText(vb, true)
			if ta != tb {
				return nil, unsupported(path, k, "different values in allOf branches cannot be merged")
			}
		case "enum":
			if va.kind != jArray || vb.kind != jArray {
				return nil, schemaErr(path, "enum must be an array")
			}
			seen := map[string]bool{}
			for _, x := range vb.arr {
				t, err := canonicalText(x, true)
				if err != nil {
					return nil, schemaErr(path, "%v", err)
				}
				seen[t] = true
			}
			r := &jsonValue{kind: jArray}
			for _, x := range va.arr {
				t, err := canonicalText(x, true)
				if err != nil {
					return nil, schemaErr(path, "%v", err)
				}
				if seen[t] {
					r.arr = append(r.arr, x)
				}
			}
			set(k, r)
		case "minimum", "exclusiveMinimum", "minLength", "minItems":
			if x, err := pickNumber(va, vb, path, k, true); err != nil {
				return nil, err
			} else {
				set(k, x)
			}
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems":
			if x, err := pickNumber(va, vb, path, k, false); err != nil {
				return nil, err
			} else {
				set(k, x)
			}
		case "anyOf":
			if va.kind != jArray || vb.kind != jArray {
				return nil, schemaErr(path, "anyOf must be an array")
			}
			if len(va.arr)*len(vb.arr) > maxMergeAlts {
				return nil, fmt.Errorf("grammar: anyOf × anyOf at %q has more than %d alternatives: %w", pathOrRoot(path), maxMergeAlts, ErrTooLarge)
			}
			r := &jsonValue{kind: jArray}
			for _, x := range va.arr {
				for _, y := range vb.arr {
					r.arr = append(r.arr, allOfValue(x, y))
				}
			}
			set(k, r)
		case "oneOf":
			return nil, unsupported(path, k, "oneOf in more than one allOf branch")
		case "multipleOf":
			// A multiple of both is a multiple of their least common
			// multiple: lcm(p1, p2) / gcd(q1, q2) for reduced p/q.
			ra, ok1 := new(big.Rat).SetString(va.num)
			rb, ok2 := new(big.Rat).SetString(vb.num)
			if va.kind != jNumber || vb.kind != jNumber || !ok1 || !ok2 || ra.Sign() <= 0 || rb.Sign() <= 0 {
				return nil, schemaErr(path, "multipleOf must be a number greater than 0")
			}
			g := new(big.Int).GCD(nil, nil, ra.Num(), rb.Num())
			l := new(big.Int).Mul(ra.Num(), rb.Num())
			l.Quo(l, g)
			q := new(big.Int).GCD(nil, nil, ra.Denom(), rb.Denom())
			set(k, jRat(new(big.Rat).SetFrac(l, q)))
		case "minProperties":
			if x, err := pickNumber(va, vb, path, k, true); err != nil {
				return nil, err
			} else {
				set(k, x)
			}
		case "maxProperties":
			if x, err := pickNumber(va, vb, path, k, false); err != nil {
				return nil, err
			} else {
				set(k, x)
			}
		case "$defs", "definitions", "uniqueItems":
			// Containers (references resolve against the document) and
			// values checkKeywords allows only in their no-op form.
		default:
			return nil, unsupported(path, k, "cannot merge it across allOf branches")
		}
	}
	// prefixItems and items: a position beyond one side's prefixItems is
	// constrained by that side's items.
	xa, xb := a.get("prefixItems"), b.get("prefixItems")
	ia, ib := a.get("items"), b.get("items")
	if xa != nil || xb != nil {
		n := 0
		for _, x := range []*jsonValue{xa, xb} {
			if x != nil {
				if x.kind != jArray {
					return nil, schemaErr(path, "prefixItems must be an array")
				}
				n = max(n, len(x.arr))
			}
		}
		at := func(x, items *jsonValue, i int) *jsonValue {
			if x != nil && i < len(x.arr) {
				return x.arr[i]
			}
			return items
		}
		pre := &jsonValue{kind: jArray}
		for i := range n {
			sa, sb := at(xa, ia, i), at(xb, ib, i)
			switch {
			case sa == nil:
				pre.arr = append(pre.arr, sb)
			case sb == nil:
				pre.arr = append(pre.arr, sa)
			default:
				pre.arr = append(pre.arr, allOfValue(sa, sb))
			}
		}
		set("prefixItems", pre)
	}
	switch {
	case ia != nil && ib != nil:
		set("items", allOfValue(ia, ib))
	case ia != nil:
		set("items", ia)
	case ib != nil:
		set("items", ib)
	}
	// properties and additionalProperties.
	pa, pb := a.get("properties"), b.get("properties")
	aa, ab := a.get("additionalProperties"), b.get("additionalProperties")
	// patternProperties: the entries of both (one pattern on both sides:
	// allOf of its schemas). One side's additionalProperties must still
	// reach every key the other side's patterns match that its own do
	// not: exact only when the other side has no pattern it lacks.
	ppa, ppb := a.get("patternProperties"), b.get("patternProperties")
	if ppa != nil || ppb != nil {
		for _, x := range []*jsonValue{ppa, ppb} {
			if x != nil && x.kind != jObject {
				return nil, schemaErr(path, "patternProperties must be an object")
			}
		}
		lacks := func(own, other *jsonValue) bool {
			for _, m := range other.objMembers() {
				if own.get(m.key) == nil {
					return true
				}
			}
			return false
		}
		if aa != nil && !isTrueSchema(aa) && lacks(ppa, ppb) || ab != nil && !isTrueSchema(ab) && lacks(ppb, ppa) {
			return nil, unsupported(path, "patternProperties", "patterns on one allOf branch beside additionalProperties on another")
		}
		merged := jObj()
		for _, m := range ppa.objMembers() {
			merged.obj = append(merged.obj, m)
		}
		for _, m := range ppb.objMembers() {
			found := false
			for i := range merged.obj {
				if merged.obj[i].key == m.key {
					merged.obj[i].val = allOfValue(merged.obj[i].val, m.val)
					found = true
				}
			}
			if !found {
				merged.obj = append(merged.obj, m)
			}
		}
		set("patternProperties", merged)
	}
	if pa != nil || pb != nil {
		props := &jsonValue{kind: jObject}
		var keys []string
		for _, p := range []*jsonValue{pa, pb} {
			if p == nil {
				continue
			}
			if p.kind != jObject {
				return nil, schemaErr(path, "properties must be an object")
			}
			for _, m := range p.obj {
				if !slices.Contains(keys, m.key) {
					keys = append(keys, m.key)
				}
			}
		}
		side := func(p, add *jsonValue, k string) *jsonValue {
			if v := p.get(k); v != nil {
				return v
			}
			return add // nil when unconstrained
		}
		for _, k := range keys {
			sa, sb := side(pa, aa, k), side(pb, ab, k)
			var v *jsonValue
			switch {
			case sa == nil:
				v = sb
			case sb == nil:
				v = sa
			default:
				v = allOfValue(sa, sb)
			}
			props.obj = append(props.obj, jsonMember{k, v})
		}
		set("properties", props)
	}
	switch {
	case aa != nil && ab != nil:
		set("additionalProperties", allOfValue(aa, ab))
	case aa != nil:
		set("additionalProperties", aa)
	case ab != nil:
		set("additionalProperties", ab)
	}
	return out, nil
}

// contextualKeyword reports whether keyword k acts only beside another
// (then/else beside if, minContains/maxContains beside contains).
func contextualKeyword(k string) bool {
	switch k {
	case "then", "else", "minContains", "maxContains", "additionalItems":
		return true
	}
	return false
}

// sameJSON reports whether two optional values are equal JSON.
func sameJSON(a, b *jsonValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	ta, err1 := canonicalText(a, true)
	tb, err2 := canonicalText(b, true)
	return err1 == nil && err2 == nil && ta == tb
}

func allOfValue(a, b *jsonValue) *jsonValue {
	// true (or {}) beside a schema is that schema: keeping a $ref alone
	// keeps it a rule reference (recursion compiles), not an inline copy.
	if isTrueSchema(a) {
		return b
	}
	if isTrueSchema(b) {
		return a
	}
	return &jsonValue{kind: jObject, obj: []jsonMember{{"allOf", &jsonValue{kind: jArray, arr: []*jsonValue{a, b}}}}}
}

// constToEnum rewrites const as a one-value enum (intersected with enum
// when both are present, by the enum case of merge).
func constToEnum(s *jsonValue) *jsonValue {
	cv := s.get("const")
	if cv == nil {
		return s
	}
	out := without(s, "const")
	one := &jsonValue{kind: jArray, arr: []*jsonValue{cv}}
	if e := s.get("enum"); e != nil && e.kind == jArray {
		ct, _ := canonicalText(cv, true)
		one = &jsonValue{kind: jArray}
		for _, x := range e.arr {
			if t, _ := canonicalText(x, true); t == ct {
				one.arr = append(one.arr, x)
			}
		}
		out = without(out, "enum")
	}
	out.obj = append(out.obj, jsonMember{"enum", one})
	return out
}

func typeValue(bits uint8) *jsonValue {
	v := &jsonValue{kind: jArray}
	for _, n := range []string{"null", "boolean", "object", "array", "string"} {
		if bits&typeNames[n] != 0 {
			v.arr = append(v.arr, &jsonValue{kind: jString, str: n})
		}
	}
	switch {
	case bits&tNumber == tNumber:
		v.arr = append(v.arr, &jsonValue{kind: jString, str: "number"})
	case bits&tInteger != 0:
		v.arr = append(v.arr, &jsonValue{kind: jString, str: "integer"})
	case bits&tFraction != 0:
		// Non-integers only: not a type name; kwTypes beside it says so.
		v.arr = append(v.arr, &jsonValue{kind: jString, str: "number"})
	}
	return v
}

// pickNumber returns the larger (wantMax) or smaller of two numeric keyword values.
func pickNumber(a, b *jsonValue, path, kw string, wantMax bool) (*jsonValue, error) {
	if a.kind != jNumber || b.kind != jNumber {
		return nil, schemaErr(path, "%s must be a number", kw)
	}
	ra, ok1 := new(big.Rat).SetString(a.num)
	rb, ok2 := new(big.Rat).SetString(b.num)
	if !ok1 || !ok2 {
		return nil, schemaErr(path, "%s must be a number", kw)
	}
	if (ra.Cmp(rb) >= 0) == wantMax {
		return a, nil
	}
	return b, nil
}

// typeSet returns the types of the values s may accept (an over-estimate).
func (c *schemaCompiler) typeSet(s *jsonValue, path string, depth int) (uint8, error) {
	if depth > maxSchemaDepth {
		return 0, fmt.Errorf("grammar: schema at %q nested deeper than %d: %w", pathOrRoot(path), maxSchemaDepth, ErrTooLarge)
	}
	if s.kind == jBool {
		if s.b {
			return tAll, nil
		}
		return 0, nil
	}
	if s.kind != jObject {
		return 0, schemaErr(path, "a schema must be an object or a boolean")
	}
	t, err := declaredTypes(s, path)
	if err != nil {
		return 0, err
	}
	for _, kw := range []string{"enum", "const"} {
		v := s.get(kw)
		if v == nil {
			continue
		}
		var vt uint8
		if kw == "const" {
			vt = valueType(v)
		} else if v.kind == jArray {
			for _, x := range v.arr {
				vt |= valueType(x)
			}
		}
		t &= vt
	}
	if r := s.get("$ref"); r != nil {
		target, ptr, err := c.resolve(r, path)
		if err != nil {
			return 0, err
		}
		rt, err := c.typeSet(target, ptr, depth+1)
		if err != nil {
			return 0, err
		}
		t &= rt
	}
	if a := s.get("allOf"); a != nil && a.kind == jArray {
		for _, x := range a.arr {
			xt, err := c.typeSet(x, path, depth+1)
			if err != nil {
				return 0, err
			}
			t &= xt
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if a := s.get(kw); a != nil && a.kind == jArray {
			var u uint8
			for _, x := range a.arr {
				xt, err := c.typeSet(x, path, depth+1)
				if err != nil {
					return 0, err
				}
				u |= xt
			}
			t &= u
		}
	}
	return t, nil
}

// finiteValues returns the canonical texts of the values s accepts when s
// is an enum or const (after following $ref), else nil.
func (c *schemaCompiler) finiteValues(s *jsonValue, path string, depth int) (map[string]bool, error) {
	if depth > maxSchemaDepth || s.kind != jObject {
		return nil, nil
	}
	if r := s.get("$ref"); r != nil && !constraining(s, "$ref") {
		t, ptr, err := c.resolve(r, path)
		if err != nil {
			return nil, err
		}
		return c.finiteValues(t, ptr, depth+1)
	}
	var out map[string]bool
	add := func(vs []*jsonValue) error {
		m := map[string]bool{}
		for _, v := range vs {
			t, err := canonicalText(v, true)
			if err != nil {
				return schemaErr(path, "%v", err)
			}
			if out == nil || out[t] {
				m[t] = true
			}
		}
		out = m
		return nil
	}
	if e := s.get("enum"); e != nil && e.kind == jArray {
		if err := add(e.arr); err != nil {
			return nil, err
		}
	}
	if v := s.get("const"); v != nil {
		if err := add([]*jsonValue{v}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// disjoint reports whether no value can satisfy both schemas, by types,
// by constants, or by a required property with different constants.
func (c *schemaCompiler) disjoint(x, y *jsonValue, path string) (bool, error) {
	tx, err := c.typeSet(x, path, 0)
	if err != nil {
		return false, err
	}
	ty, err := c.typeSet(y, path, 0)
	if err != nil {
		return false, err
	}
	if tx&ty == 0 {
		return true, nil
	}
	vx, err := c.finiteValues(x, path, 0)
	if err != nil {
		return false, err
	}
	vy, err := c.finiteValues(y, path, 0)
	if err != nil {
		return false, err
	}
	if vx != nil && vy != nil && !intersects(vx, vy) {
		return true, nil
	}
	if tx != tObject || ty != tObject || x.kind != jObject || y.kind != jObject {
		return false, nil
	}
	rx, ry := x.get("required"), y.get("required")
	px, py := x.get("properties"), y.get("properties")
	if rx == nil || ry == nil || px == nil || py == nil || rx.kind != jArray || ry.kind != jArray {
		return false, nil
	}
	for _, k := range rx.arr {
		if k.kind != jString || !slices.ContainsFunc(ry.arr, func(v *jsonValue) bool { return v.kind == jString && v.str == k.str }) {
			continue
		}
		sx, sy := px.get(k.str), py.get(k.str)
		if sx == nil || sy == nil {
			continue
		}
		fx, err := c.finiteValues(sx, path, 0)
		if err != nil {
			return false, err
		}
		fy, err := c.finiteValues(sy, path, 0)
		if err != nil {
			return false, err
		}
		if fx != nil && fy != nil && !intersects(fx, fy) {
			return true, nil
		}
	}
	return false, nil
}

func intersects(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// isTrueSchema reports whether s is true or the empty schema.
func isTrueSchema(s *jsonValue) bool {
	return s.kind == jBool && s.b || s.kind == jObject && len(s.obj) == 0
}
