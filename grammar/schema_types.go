package grammar

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
)

// Per-type grammars of the schema compiler.

// sharedRule returns the rule named name, building it with body on first use.
func (c *schemaCompiler) sharedRule(name string, body func() *Expr) *Expr {
	if i, ok := c.shared[name]; ok {
		return Ref(i)
	}
	i := c.newRule(name)
	c.shared[name] = i
	c.g.Rules[i].Body = body()
	return Ref(i)
}

// ws is the whitespace allowed between tokens.
func (c *schemaCompiler) ws() *Expr {
	if c.opts.MaxWhitespace < 0 {
		return Lit("")
	}
	return c.sharedRule("ws", func() *Expr {
		return Repeat(Class(RuneRange{'\t', '\n'}, RuneRange{'\r', '\r'}, RuneRange{' ', ' '}), 0, c.opts.MaxWhitespace)
	})
}

// sep is a comma with whitespace around it.
func (c *schemaCompiler) sep() *Expr { return Seq(c.ws(), Lit(","), c.ws()) }

// anyString is any JSON string.
func (c *schemaCompiler) anyString() *Expr {
	return c.sharedRule("string", func() *Expr { return Seq(Lit(`"`), Star(jsonStringChar()), Lit(`"`)) })
}

// anyNumber is any JSON number (at most 3 exponent digits).
func (c *schemaCompiler) anyNumber() *Expr {
	return c.sharedRule("number", func() *Expr {
		return Seq(Opt(Lit("-")), Alt(Lit("0"), Seq(digitRange('1', '9'), Star(digit))),
			Opt(Seq(Lit("."), Plus(digit))),
			Opt(Seq(Class(RuneRange{'E', 'E'}, RuneRange{'e', 'e'}), Opt(Class(RuneRange{'+', '+'}, RuneRange{'-', '-'})), Repeat(digit, 1, 3))))
	})
}

// anyInteger is any canonical JSON integer.
func (c *schemaCompiler) anyInteger() *Expr {
	return c.sharedRule("integer", func() *Expr { return intRangeExpr(nil, nil) })
}

// anyValue is any JSON value.
func (c *schemaCompiler) anyValue() *Expr {
	if i, ok := c.shared["value"]; ok {
		return Ref(i)
	}
	v := c.newRule("value")
	c.shared["value"] = v
	obj := c.newRule("object")
	arr := c.newRule("array")
	str, num := c.anyString(), c.anyNumber()
	ws := c.ws()
	member := Seq(str, ws, Lit(":"), ws, Ref(v))
	c.g.Rules[obj].Body = Seq(Lit("{"), ws, Opt(Seq(member, Star(Seq(c.sep(), member)))), ws, Lit("}"))
	c.g.Rules[arr].Body = Seq(Lit("["), ws, Opt(Seq(Ref(v), Star(Seq(c.sep(), Ref(v))))), ws, Lit("]"))
	c.g.Rules[v].Body = Alt(Ref(obj), Ref(arr), str, num, Lit("true"), Lit("false"), Lit("null"))
	return Ref(v)
}

// numBound reads a numeric keyword (nil when absent).
func numBound(s *jsonValue, kw, path string) (*big.Rat, error) {
	v := s.get(kw)
	if v == nil {
		return nil, nil
	}
	if v.kind != jNumber {
		return nil, schemaErr(path, "%s must be a number", kw)
	}
	if _, err := canonicalNumber(v.num); err != nil {
		return nil, unsupported(path, kw, err.Error())
	}
	r, _ := new(big.Rat).SetString(v.num)
	return r, nil
}

// numberExpr returns the numbers (integers only when intOnly) within the
// schema's bounds.
func (c *schemaCompiler) numberExpr(s *jsonValue, path string, intOnly bool) (*Expr, error) {
	var lo, hi *bound
	for _, k := range []struct {
		kw        string
		low, excl bool
	}{{"minimum", true, false}, {"exclusiveMinimum", true, true}, {"maximum", false, false}, {"exclusiveMaximum", false, true}} {
		r, err := numBound(s, k.kw, path)
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		b := &bound{v: r, excl: k.excl}
		if k.low {
			if c := 0; lo == nil || func() bool { c = r.Cmp(lo.v); return c > 0 || c == 0 && k.excl }() {
				lo = b
			}
		} else {
			if c := 0; hi == nil || func() bool { c = r.Cmp(hi.v); return c < 0 || c == 0 && k.excl }() {
				hi = b
			}
		}
	}
	if mv := s.get("multipleOf"); mv != nil {
		r, err := numBound(s, "multipleOf", path)
		if err != nil {
			return nil, err
		}
		if r.Sign() <= 0 {
			return nil, schemaErr(path, "multipleOf must be greater than 0")
		}
		// Built: 1/m (every integer is a multiple: on integers no
		// constraint), 1 (integers), and 10^-d on unbounded numbers
		// (plain decimals with at most d fraction digits). A modulus of
		// the digits (multipleOf 2, 1.5) is not built.
		inv := new(big.Rat).Inv(r)
		d, pow10 := decimalPlaces(r)
		switch {
		case intOnly && inv.IsInt():
		case r.Cmp(big.NewRat(1, 1)) == 0:
			intOnly = true
		case pow10 && lo == nil && hi == nil:
			return Seq(Opt(Lit("-")), Alt(Lit("0"), Seq(digitRange('1', '9'), Star(digit))),
				Opt(Seq(Lit("."), Repeat(digit, 1, d)))), nil
		default:
			// The digits' residue (multipleOf.go), intersected with the
			// bounds' numbers.
			base, err := c.numberExpr(without(s, "multipleOf"), path, intOnly)
			if err != nil {
				return nil, err
			}
			if base.Op == OpRef { // unbounded: plain decimals
				base = Seq(Opt(Lit("-")), Alt(Lit("0"), Seq(digitRange('1', '9'), Star(digit))))
				if !intOnly {
					base = Seq(base, Opt(Seq(Lit("."), Plus(digit))))
				}
			}
			return multipleOfExpr(base, r, intOnly, path)
		}
	}
	if intOnly {
		if lo == nil && hi == nil {
			return c.anyInteger(), nil
		}
		var ilo, ihi *big.Int
		if lo != nil {
			ilo = ceilRat(lo.v)
			if lo.excl && new(big.Rat).SetInt(ilo).Cmp(lo.v) == 0 {
				ilo.Add(ilo, big.NewInt(1))
			}
		}
		if hi != nil {
			ihi = floorRat(hi.v)
			if hi.excl && new(big.Rat).SetInt(ihi).Cmp(hi.v) == 0 {
				ihi.Sub(ihi, big.NewInt(1))
			}
		}
		return intRangeExpr(ilo, ihi), nil
	}
	if lo == nil && hi == nil {
		return c.anyNumber(), nil
	}
	return numberRangeExpr(lo, hi), nil
}

// fractionExpr returns the numbers that are not integers (a type negation
// leaves them): plain decimals with a nonzero fraction digit. Exponent
// forms are not derived; bounds are refused (the grammar cannot intersect
// a range with "not an integer").
func (c *schemaCompiler) fractionExpr(s *jsonValue, path string) (*Expr, error) {
	for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		if s.get(kw) != nil {
			return nil, unsupported(path, kw, "on numbers that must not be integers (a negated integer type)")
		}
	}
	return Seq(Opt(Lit("-")), Alt(Lit("0"), Seq(digitRange('1', '9'), Star(digit))), Lit("."),
		Star(digit), digitRange('1', '9'), Star(digit)), nil
}

// decimalPlaces reports whether r is 10^-d for some d ≥ 1 (and d).
func decimalPlaces(r *big.Rat) (int, bool) {
	if r.Num().Cmp(big.NewInt(1)) != 0 {
		return 0, false
	}
	den := new(big.Int).Set(r.Denom())
	d := 0
	ten := big.NewInt(10)
	for den.Cmp(big.NewInt(1)) > 0 {
		q, m := new(big.Int).DivMod(den, ten, new(big.Int))
		if m.Sign() != 0 {
			return 0, false
		}
		den = q
		d++
	}
	return d, d >= 1 && d <= maxNumberExponent
}

func floorRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	_ = m
	return q // DivMod is Euclidean: floor for a positive denominator
}

func ceilRat(r *big.Rat) *big.Int {
	f := floorRat(r)
	if new(big.Rat).SetInt(f).Cmp(r) != 0 {
		f.Add(f, big.NewInt(1))
	}
	return f
}

// maxStringCount bounds minLength / maxLength / minItems / maxItems that
// the grammar spells out (each unit of a bound is a copy in the automaton).
const maxStringCount = 10000

func (c *schemaCompiler) countKeyword(s *jsonValue, kw, path string) (int, bool, error) {
	v := s.get(kw)
	if v == nil {
		return 0, false, nil
	}
	n, err := nonNegInt(v, path, kw)
	if err != nil {
		return 0, false, err
	}
	if (kw == "maxLength" || kw == "maxItems") && c.opts.MaxOutputBytes > 0 && n >= c.opts.MaxOutputBytes {
		// No reply is that long: every character and every item takes a
		// byte at least. The bound constrains nothing (see SchemaOptions).
		return 0, false, nil
	}
	if n > maxStringCount {
		return 0, false, fmt.Errorf("grammar: %s %d at %q is above %d: %w", kw, n, pathOrRoot(path), maxStringCount, ErrTooLarge)
	}
	return n, true, nil
}

// stringExpr returns the strings the schema's string keywords allow.
func (c *schemaCompiler) stringExpr(s *jsonValue, path string) (*Expr, error) {
	minL, hasMin, err := c.countKeyword(s, "minLength", path)
	if err != nil {
		return nil, err
	}
	maxL, hasMax, err := c.countKeyword(s, "maxLength", path)
	if err != nil {
		return nil, err
	}
	pat, fmtv := s.get("pattern"), s.get("format")
	if fmtv != nil && fmtv.kind == jString && formatGrammar(fmtv.str) == nil {
		fmtv = nil // a format kiln does not know: an annotation
	}
	lengthBounded := (hasMin && minL > 0) || hasMax
	automaton := s.get(kwPatterns) != nil || s.get(kwNotPatterns) != nil ||
		s.get(kwNotIn) != nil && (pat != nil || lengthBounded || fmtv != nil) || fmtv != nil && (pat != nil || lengthBounded)
	if automaton {
		return c.stringByAutomaton(s, path, minL, hasMin, maxL, hasMax)
	}
	if ex := s.get(kwNotIn); ex != nil {
		// Strings outside a set (a negated enum), with no other constraint.
		if fmtv != nil {
			return nil, unsupported(path, "not", "a string excluded by not/enum together with format")
		}
		if ex.kind != jArray {
			return nil, schemaErr(path, "bad internal string exclusion")
		}
		var names []string
		for _, x := range ex.arr {
			if x.kind != jString {
				return nil, schemaErr(path, "bad internal string exclusion")
			}
			names = append(names, x.str)
		}
		return Seq(Lit(`"`), jsonEncodeExpr(notInSet(names)), Lit(`"`)), nil
	}
	if fmtv != nil {
		if fmtv.kind != jString {
			return nil, schemaErr(path, "format must be a string")
		}
		fg := formatGrammar(fmtv.str)
		return c.sharedRule("format-"+fmtv.str, func() *Expr {
			return Seq(Lit(`"`), Ref(c.g.importRules(fg)), Lit(`"`))
		}), nil
	}
	if pat != nil {
		if pat.kind != jString {
			return nil, schemaErr(path, "pattern must be a string")
		}
		branches, err := parseRegex(pat.str)
		if err != nil {
			return nil, unsupported(path, "pattern", err.Error())
		}
		if lengthBounded && patternImpliesLength(branches, minL, hasMin, maxL, hasMax) {
			// Every string the pattern matches has a length within the
			// bounds: they constrain nothing more.
			return c.stringExpr(without(s, "minLength", "maxLength"), path)
		}
		if lengthBounded {
			e, ok := patternWithLength(branches, minL, hasMin, maxL, hasMax)
			if !ok {
				// The pattern's automaton intersected with the lengths.
				return c.stringByAutomaton(s, path, minL, hasMin, maxL, hasMax)
			}
			if e == nil { // the pattern matches every string: only the bounds remain
				return c.stringExpr(without(s, "pattern"), path)
			}
			return Seq(Lit(`"`), jsonEncodeExpr(e), Lit(`"`)), nil
		}
		anyChars := Star(jsonStringChar())
		var alts []*Expr
		for _, br := range branches {
			parts := []*Expr{}
			if !br.startAnchor {
				parts = append(parts, anyChars)
			}
			parts = append(parts, jsonEncodeExpr(br.body))
			if !br.endAnchor {
				parts = append(parts, anyChars)
			}
			alts = append(alts, Seq(parts...))
		}
		return Seq(Lit(`"`), Alt(alts...), Lit(`"`)), nil
	}
	if !hasMin && !hasMax {
		return c.anyString(), nil
	}
	hi := -1
	if hasMax {
		hi = maxL
		if hi < minL {
			return Never(), nil
		}
	}
	ch := c.sharedRule("char", jsonStringChar)
	return Seq(Lit(`"`), Repeat(ch, minL, hi), Lit(`"`)), nil
}

// arrayExpr returns the arrays the schema's array keywords allow.
func (c *schemaCompiler) arrayExpr(s *jsonValue, path string) (*Expr, error) {
	minN, _, err := c.countKeyword(s, "minItems", path)
	if err != nil {
		return nil, err
	}
	maxN, hasMax, err := c.countKeyword(s, "maxItems", path)
	if err != nil {
		return nil, err
	}
	if !hasMax {
		maxN = -1
	} else if maxN < minN {
		return Never(), nil
	}
	if cs := s.get("contains"); cs != nil {
		return c.containsExpr(s, cs, path, minN, maxN)
	}
	var prefix []*Expr
	if p := s.get("prefixItems"); p != nil {
		if p.kind != jArray {
			return nil, schemaErr(path, "prefixItems must be an array")
		}
		for i, x := range p.arr {
			e, err := c.compile(x, childPath(path, "prefixItems", strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			prefix = append(prefix, e)
		}
	}
	item := c.anyValue()
	if it := s.get("items"); it != nil {
		e, err := c.compile(it, childPath(path, "items"))
		if err != nil {
			return nil, err
		}
		item = e
	}
	if !item.IsNever() && item.Op != OpRef {
		// A rule, so that bounded repetition copies a reference, not the tree.
		i := c.newRule("item" + path)
		c.g.Rules[i].Body = item
		item = Ref(i)
	}
	k := len(prefix)
	if maxN >= 0 && k > maxN {
		prefix, k = prefix[:maxN], maxN
	}
	// tail(i): the elements after the first i (which are written), with a
	// leading separator each.
	tailMin := max(0, minN-k)
	tailMax := -1
	if maxN >= 0 {
		tailMax = maxN - k
	}
	var rest *Expr
	switch {
	case item.IsNever() || tailMax == 0:
		if tailMin > 0 {
			rest = Never()
		} else {
			rest = Lit("")
		}
	default:
		rest = Repeat(Seq(c.sep(), item), tailMin, tailMax)
	}
	// Build from the back: after i elements (i ≥ 1), more may follow.
	after := rest
	for i := k - 1; i >= 1; i-- {
		// after(i): elements i.. given i are written.
		next := Seq(c.sep(), prefix[i], after)
		if i >= minN {
			after = Alt(Lit(""), next)
		} else {
			after = next
		}
	}
	var first *Expr
	if k > 0 {
		first = Seq(prefix[0], after)
	} else if item.IsNever() || tailMax == 0 {
		first = Never()
	} else {
		// No prefix: item (sep item){min-1, max-1}.
		lo := max(0, minN-1)
		hi := -1
		if maxN >= 0 {
			hi = maxN - 1
		}
		first = Seq(item, Repeat(Seq(c.sep(), item), lo, hi))
	}
	ws := c.ws()
	body := first
	if minN == 0 {
		body = Opt(first)
		if first.IsNever() {
			body = Lit("")
		}
	}
	return Seq(Lit("["), ws, body, ws, Lit("]")), nil
}

// maxContainsCount bounds the minContains / maxContains counted (a rule
// per count).
const maxContainsCount = 1000

// containsExpr returns the arrays of a schema with contains: elements of
// items (any value when absent), of which between minContains (default 1)
// and maxContains match contains. With maxContains the elements are
// partitioned into items∧contains and items∧¬contains (negation) and
// counted exactly; without it, at least minContains elements are
// items∧contains and the rest any items (an ambiguous but exact grammar).
func (c *schemaCompiler) containsExpr(s, cs *jsonValue, path string, minN, maxN int) (*Expr, error) {
	minC, maxC, hasMax, err := containsCounts(s, path)
	if err != nil {
		return nil, err
	}
	if minC == 0 && !hasMax {
		return c.arrayExpr(without(s, "contains", "minContains", "maxContains"), path)
	}
	if s.get("prefixItems") != nil {
		return nil, unsupported(path, "contains", "together with prefixItems")
	}
	if maxN >= 0 {
		return nil, unsupported(path, "contains", "together with maxItems")
	}
	if minN > minC {
		return nil, unsupported(path, "contains", "together with minItems above minContains")
	}
	if hasMax && maxC < minC {
		return Never(), nil
	}
	k := minC
	if hasMax {
		k = maxC
	}
	if k > maxContainsCount {
		return nil, fmt.Errorf("grammar: minContains/maxContains %d at %q is above %d: %w", k, pathOrRoot(path), maxContainsCount, ErrTooLarge)
	}
	items := s.get("items")
	if items == nil {
		items = jBoolean(true)
	}
	asRule := func(e *Expr, name string) *Expr {
		if e.IsNever() || e.Op == OpRef {
			return e
		}
		i := c.newRule(name + path)
		c.g.Rules[i].Body = e
		return Ref(i)
	}
	in, err := c.compile(allOfValue(items, cs), childPath(path, "contains"))
	if err != nil {
		return nil, err
	}
	in = asRule(in, "contains")
	var out *Expr
	if hasMax {
		ncs, err := c.negate(cs, childPath(path, "contains"), 1)
		if err != nil {
			var ue *UnsupportedError
			if asUnsupported(err, &ue) {
				return nil, unsupported(path, "maxContains", "the contains schema has no complement: "+ue.Reason)
			}
			return nil, err
		}
		out, err = c.compile(allOfValue(items, ncs), childPath(path, "contains"))
		if err != nil {
			return nil, err
		}
	} else {
		out, err = c.compile(items, childPath(path, "items"))
		if err != nil {
			return nil, err
		}
	}
	out = asRule(out, "item")
	// after[j]: the rest of the array (each element after a separator)
	// with j elements matching contains written (saturated at k without
	// maxContains).
	sep := c.sep()
	after := make([]int, k+1)
	for j := range after {
		after[j] = c.newRule("contains" + path)
	}
	if err := c.checkRules(path); err != nil {
		return nil, err
	}
	for j := 0; j <= k; j++ {
		var ends []*Expr
		if j >= minC {
			ends = append(ends, Lit(""))
		}
		if j < k && !in.IsNever() {
			ends = append(ends, Seq(sep, in, Ref(after[j+1])))
		}
		var outs *Expr = Lit("")
		if !out.IsNever() {
			outs = Star(Seq(sep, out))
		}
		c.g.Rules[after[j]].Body = Seq(outs, Alt(ends...))
	}
	var firsts []*Expr
	if minC == 0 {
		firsts = append(firsts, Lit(""))
	}
	if !out.IsNever() {
		firsts = append(firsts, Seq(out, Ref(after[0])))
	}
	if k > 0 && !in.IsNever() {
		firsts = append(firsts, Seq(in, Ref(after[min(1, k)])))
	}
	ws := c.ws()
	return Seq(Lit("["), ws, Alt(firsts...), ws, Lit("]")), nil
}

// objectExpr returns the objects the schema's object keywords allow, with
// properties in schema order (see schema.go).
func (c *schemaCompiler) objectExpr(s *jsonValue, path string) (*Expr, error) {
	// A map (no declared properties) may name its keys: propertyNames (a
	// string schema) or one patternProperties entry with
	// additionalProperties false give the keys' language and the values'
	// schema. With declared properties the keys left would be a language
	// minus names, and with another additionalProperties the keys that
	// match no pattern its complement: not built, refused.
	pats, err := c.objectPatterns(s, path)
	if err != nil {
		return nil, err
	}
	var mapKey *Expr
	var mapVal *jsonValue
	if pats == nil {
		if mapKey, mapVal, err = c.mapKeys(s, path); err != nil {
			return nil, err
		}
	} else if s.get("propertyNames") != nil {
		return nil, unsupported(path, "patternProperties", "together with propertyNames")
	}
	type prop struct {
		name     string
		val      *Expr
		required bool
	}
	var props []prop
	index := map[string]int{}
	if p := s.get("properties"); p != nil {
		if p.kind != jObject {
			return nil, schemaErr(path, "properties must be an object")
		}
		for _, m := range p.obj {
			// A declared name a pattern matches answers to both.
			sch := m.val
			for _, pt := range pats {
				if pt.d.matches(m.key) {
					sch = allOfValue(sch, pt.val)
				}
			}
			e, err := c.compile(sch, childPath(path, "properties", m.key))
			if err != nil {
				return nil, err
			}
			index[m.key] = len(props)
			props = append(props, prop{name: m.key, val: e})
		}
	}
	addl := s.get("additionalProperties")
	var addlExpr *Expr
	requiredExtra := c.anyValue() // the value of a required property not declared
	if mapVal != nil {
		addl = mapVal
	}
	switch {
	case addl == nil && c.opts.StrictProperties && declaresProperties(s):
		addlExpr = Never()
	case addl == nil:
		addlExpr = requiredExtra
	default:
		e, err := c.compile(addl, childPath(path, "additionalProperties"))
		if err != nil {
			return nil, err
		}
		addlExpr, requiredExtra = e, e
	}
	if r := s.get("required"); r != nil {
		if r.kind != jArray {
			return nil, schemaErr(path, "required must be an array")
		}
		for _, x := range r.arr {
			if x.kind != jString {
				return nil, schemaErr(path, "required must hold strings")
			}
			if i, ok := index[x.str]; ok {
				props[i].required = true
				continue
			}
			// Required but not declared: it is an additional property.
			val := requiredExtra
			if pats != nil {
				// The patterns it matches, or additionalProperties.
				var sch *jsonValue
				for _, pt := range pats {
					if pt.d.matches(x.str) {
						if sch == nil {
							sch = pt.val
						} else {
							sch = allOfValue(sch, pt.val)
						}
					}
				}
				if sch != nil {
					e, err := c.compile(sch, childPath(path, "patternProperties"))
					if err != nil {
						return nil, err
					}
					val = e
				}
			} else if mapKey != nil {
				// propertyNames on a map: refused with required above.
				return nil, unsupported(path, "propertyNames", "together with required properties")
			}
			index[x.str] = len(props)
			props = append(props, prop{name: x.str, val: val, required: true})
		}
	}
	ws := c.ws()
	kv := func(key, val *Expr) *Expr { return Seq(key, ws, Lit(":"), ws, val) }
	// Additional members: keys other than the declared ones.
	var addlKV *Expr
	if pats != nil {
		names := make([]string, len(props))
		for i, p := range props {
			names[i] = p.name
		}
		if addlKV, err = c.patternMembers(pats, names, addlExpr, kv, path); err != nil {
			return nil, err
		}
	} else if !addlExpr.IsNever() {
		var key *Expr
		if mapKey != nil {
			key = mapKey
		} else if len(props) == 0 {
			key = c.anyString()
		} else {
			names := make([]string, len(props))
			for i, p := range props {
				names[i] = p.name
			}
			key = Seq(Lit(`"`), jsonEncodeExpr(notInSet(names)), Lit(`"`))
		}
		i := c.newRule("member" + path)
		c.g.Rules[i].Body = kv(key, addlExpr)
		addlKV = Ref(i)
	}
	minP, _, err := c.countKeyword(s, "minProperties", path)
	if err != nil {
		return nil, err
	}
	maxP, hasMaxP, err := c.countKeyword(s, "maxProperties", path)
	if err != nil {
		return nil, err
	}
	if minP > 1 || hasMaxP && (addlKV != nil || maxP < len(props)) {
		names := make([]*Expr, len(props))
		vals := make([]*Expr, len(props))
		req := make([]bool, len(props))
		for j, p := range props {
			names[j], vals[j], req[j] = Lit(string(appendJSONString(nil, p.name))), p.val, p.required
		}
		if !hasMaxP {
			maxP = -1
		}
		return c.countedObject(names, vals, req, addlKV, minP, maxP, path)
	}
	// tail(j): members from property j on, after at least one member.
	n := len(props)
	var tailRules []int
	for range n + 1 {
		tailRules = append(tailRules, c.newRule("props"+path))
	}
	if addlKV != nil {
		c.g.Rules[tailRules[n]].Body = Star(Seq(c.sep(), addlKV))
	} else {
		c.g.Rules[tailRules[n]].Body = Lit("")
	}
	member := func(j int) *Expr {
		return kv(Lit(string(appendJSONString(nil, props[j].name))), props[j].val)
	}
	for j := n - 1; j >= 0; j-- {
		m := Seq(c.sep(), member(j))
		if !props[j].required {
			m = Opt(m)
		}
		c.g.Rules[tailRules[j]].Body = Seq(m, Ref(tailRules[j+1]))
	}
	// The first member written is property j (all before it skipped, so
	// optional), or an additional one when all are optional.
	var firsts []*Expr
	allOptional := true
	for j := range n {
		firsts = append(firsts, Seq(member(j), Ref(tailRules[j+1])))
		if props[j].required {
			allOptional = false
			break
		}
	}
	if allOptional {
		if addlKV != nil {
			firsts = append(firsts, Seq(addlKV, Star(Seq(c.sep(), addlKV))))
		}
		if minP == 0 { // minProperties 1: not the empty object
			firsts = append(firsts, Lit(""))
		}
	}
	if err := c.checkRules(path); err != nil {
		return nil, err
	}
	return Seq(Lit("{"), ws, Alt(firsts...), ws, Lit("}")), nil
}

// stringByAutomaton returns the strings of a schema's pattern, the
// patterns allOf merged (kwPatterns), the complements of negated patterns
// (kwNotPatterns), outside kwNotIn and within the length bounds, as one
// pattern expression: the intersection of their automata (regexdfa.go).
func (c *schemaCompiler) stringByAutomaton(s *jsonValue, path string, minL int, hasMin bool, maxL int, hasMax bool) (*Expr, error) {
	var d *dfa
	and := func(x *dfa) error {
		if d == nil {
			d = x
			return nil
		}
		var err error
		d, err = intersect(d, x)
		return err
	}
	refuse := func(kw string, err error) error {
		if errors.Is(err, errDFATooLarge) {
			return unsupported(path, kw, "string constraints whose intersection needs too large an automaton")
		}
		return err
	}
	strs := func(kw string) ([]string, error) {
		v := s.get(kw)
		if v == nil {
			return nil, nil
		}
		if v.kind == jString && kw == "pattern" {
			return []string{v.str}, nil
		}
		if v.kind != jArray {
			return nil, schemaErr(path, "%s must be a string", kw)
		}
		var out []string
		for _, x := range v.arr {
			if x.kind != jString {
				return nil, schemaErr(path, "bad internal string list")
			}
			out = append(out, x.str)
		}
		return out, nil
	}
	for _, kw := range []string{"pattern", kwPatterns, kwNotPatterns} {
		pats, err := strs(kw)
		if err != nil {
			return nil, err
		}
		for _, p := range pats {
			branches, err := parseRegex(p)
			if err != nil {
				return nil, unsupported(path, "pattern", err.Error())
			}
			pd, err := patternDFA(branches)
			if err != nil {
				return nil, refuse("pattern", err)
			}
			pd = pd.minimize()
			if kw == kwNotPatterns {
				pd = pd.complement()
			}
			if err := and(pd); err != nil {
				return nil, refuse("pattern", err)
			}
		}
	}
	if v := s.get("format"); v != nil {
		if v.kind != jString {
			return nil, schemaErr(path, "format must be a string")
		}
		if fe := formatExpr(v.str); fe != nil { // else an annotation
			fd, err := exprDFA(fe)
			if err != nil {
				return nil, refuse("format", err)
			}
			if err := and(fd.minimize()); err != nil {
				return nil, refuse("format", err)
			}
		}
	}
	names, err := strs(kwNotIn)
	if err != nil {
		return nil, err
	}
	if names != nil {
		if err := and(finiteDFA(names).complement()); err != nil {
			return nil, refuse("not", err)
		}
	}
	if (hasMin && minL > 0) || hasMax {
		hi := -1
		if hasMax {
			hi = maxL
		}
		kw := "maxLength"
		if hasMin && minL > 0 {
			kw = "minLength"
		}
		ld, err := lengthDFA(minL, hi)
		if err != nil {
			return nil, refuse(kw, err)
		}
		if err := and(ld); err != nil {
			return nil, refuse(kw, err)
		}
	}
	if d == nil {
		return c.anyString(), nil
	}
	m := d.minimize()
	if m.isEmpty() {
		return Never(), nil
	}
	if len(m.edges) <= maxDFAExprStates {
		if e, err := m.toExprLimit(maxDFAExprNodesSmall); err == nil {
			return Seq(Lit(`"`), jsonEncodeExpr(e), Lit(`"`)), nil
		} else if !errors.Is(err, errDFATooLarge) {
			return nil, err
		}
	}
	// Small as an automaton, large as an expression (a length counted
	// through a pattern): the automaton itself.
	return Seq(Lit(`"`), &Expr{Op: OpJSONChars, Auto: m}, Lit(`"`)), nil
}

// maxCountedRules bounds the rules of an object whose members are counted
// (declared properties + 1, times the counts tracked).
const maxCountedRules = 2048

// countedObject returns the objects of declared members (names[j]: vals[j],
// in order, required where req[j]) followed by any number of additional
// members addlKV (nil: none), with between minP and maxP members in all
// (maxP < 0: no maximum). The grammar tracks the members written so far:
// rule after[j][k] is the rest of the object from declared member j on,
// with k members written (saturated at minP without a maximum).
func (c *schemaCompiler) countedObject(names, vals []*Expr, req []bool, addlKV *Expr, minP, maxP int, path string) (*Expr, error) {
	n := len(names)
	top := maxP
	if top < 0 {
		top = minP
	}
	if (n+1)*(top+1) > maxCountedRules {
		return nil, fmt.Errorf("grammar: counting %d members of the object at %q needs more than %d rules: %w", top, pathOrRoot(path), maxCountedRules, ErrTooLarge)
	}
	if maxP >= 0 && maxP < minP {
		return Never(), nil
	}
	ws := c.ws()
	sep := c.sep()
	member := func(j int) *Expr { return Seq(names[j], ws, Lit(":"), ws, vals[j]) }
	sat := func(k int) int {
		if maxP < 0 && k > minP {
			return minP
		}
		return k
	}
	after := make([][]int, n+1)
	for j := range after {
		after[j] = make([]int, top+1)
		for k := range after[j] {
			after[j][k] = c.newRule("counted" + path)
		}
	}
	if err := c.checkRules(path); err != nil {
		return nil, err
	}
	// The additional members after k written.
	rest := func(k int) *Expr {
		lo := max(0, minP-k)
		hi := -1
		if maxP >= 0 {
			hi = maxP - k
		}
		if addlKV == nil {
			if lo == 0 {
				return Lit("")
			}
			return Never()
		}
		return Repeat(Seq(sep, addlKV), lo, hi)
	}
	for k := 0; k <= top; k++ {
		c.g.Rules[after[n][k]].Body = rest(k)
	}
	for j := n - 1; j >= 0; j-- {
		for k := 0; k <= top; k++ {
			var alts []*Expr
			if maxP < 0 || k < maxP {
				alts = append(alts, Seq(sep, member(j), Ref(after[j+1][sat(k+1)])))
			}
			if !req[j] {
				alts = append(alts, Ref(after[j+1][k]))
			}
			c.g.Rules[after[j][k]].Body = Alt(alts...)
		}
	}
	// The first member is declared member j (those before it skipped), or
	// an additional one when every declared member is optional.
	var firsts []*Expr
	allOptional := true
	if maxP != 0 {
		for j := range n {
			firsts = append(firsts, Seq(member(j), Ref(after[j+1][sat(1)])))
			if req[j] {
				allOptional = false
				break
			}
		}
		if allOptional && addlKV != nil {
			firsts = append(firsts, Seq(addlKV, rest(1)))
		}
	}
	if allOptional && minP == 0 {
		firsts = append(firsts, Lit(""))
	}
	return Seq(Lit("{"), ws, Alt(firsts...), ws, Lit("}")), nil
}

// patternWithLength returns the strings of a pattern (regex branches, as
// parseRegex gives them) with a length in [minL, maxL] characters, in the
// cases where that is a plain regular expression again: a pattern that
// matches every string (a branch whose body matches the empty string and is
// anchored at one end at most: a search finds it anywhere), which leaves
// the bounds alone (nil, true); and one branch anchored at both ends whose
// body is one character class repeated (^[0-9a-z]+$), whose repetition
// the bounds narrow. Anything else is (nil, false): refused, not loosened.
func patternWithLength(branches []regexBranch, minL int, hasMin bool, maxL int, hasMax bool) (*Expr, bool) {
	for _, br := range branches {
		if !(br.startAnchor && br.endAnchor) && exprNullable(br.body) {
			return nil, true
		}
	}
	if len(branches) != 1 || !branches[0].startAnchor || !branches[0].endAnchor {
		return nil, false
	}
	body := branches[0].body
	lo, hi := 1, 1
	if body.Op == OpRepeat {
		lo, hi, body = body.Min, body.Max, body.Subs[0]
	}
	if body.Op != OpClass {
		return nil, false
	}
	if hasMin {
		lo = max(lo, minL)
	}
	if hasMax && (hi < 0 || maxL < hi) {
		hi = maxL
	}
	if hi >= 0 && hi < lo {
		return Never(), true
	}
	if hi > maxStringCount || lo > maxStringCount {
		return nil, false
	}
	return Repeat(body, lo, hi), true
}

// patternImpliesLength reports whether every string a pattern matches has
// a length (in characters) within the bounds.
func patternImpliesLength(branches []regexBranch, minL int, hasMin bool, maxL int, hasMax bool) bool {
	for _, br := range branches {
		lo, hi := exprLengths(br.body)
		if !br.startAnchor || !br.endAnchor {
			hi = -1 // a search: any text around the match
		}
		if hasMin && lo < minL || hasMax && (hi < 0 || hi > maxL) {
			return false
		}
	}
	return true
}

// exprLengths returns the fewest and most characters a regex expression
// (no rule references) derives; most is -1 when unbounded.
func exprLengths(e *Expr) (lo, hi int) {
	const big = 1 << 30
	clamp := func(n int) int { return min(n, big) }
	switch e.Op {
	case OpLit:
		n := len([]rune(e.Lit))
		return n, n
	case OpClass:
		return 1, 1
	case OpSeq:
		for _, x := range e.Subs {
			a, b := exprLengths(x)
			lo = clamp(lo + a)
			if hi >= 0 {
				if b < 0 {
					hi = -1
				} else {
					hi = clamp(hi + b)
				}
			}
		}
		return lo, hi
	case OpAlt:
		if len(e.Subs) == 0 {
			return big, 0 // matches nothing: any bound holds
		}
		lo = big
		for _, x := range e.Subs {
			a, b := exprLengths(x)
			lo = min(lo, a)
			if hi >= 0 {
				if b < 0 {
					hi = -1
				} else {
					hi = max(hi, b)
				}
			}
		}
		return lo, hi
	case OpRepeat:
		a, b := exprLengths(e.Subs[0])
		lo = clamp(a * e.Min)
		switch {
		case e.Max < 0 && b != 0:
			hi = -1
		case e.Max < 0:
			hi = 0
		case b < 0:
			hi = -1
			if e.Max == 0 {
				hi = 0
			}
		default:
			hi = clamp(b * e.Max)
		}
		return lo, hi
	}
	return 0, -1 // not produced by patterns: claim nothing
}

// exprNullable reports whether e derives the empty string (e holds no
// rule references: a regex's expression).
func exprNullable(e *Expr) bool {
	switch e.Op {
	case OpLit:
		return e.Lit == ""
	case OpSeq:
		for _, s := range e.Subs {
			if !exprNullable(s) {
				return false
			}
		}
		return true
	case OpAlt:
		for _, s := range e.Subs {
			if exprNullable(s) {
				return true
			}
		}
		return false
	case OpRepeat:
		return e.Min == 0 || exprNullable(e.Subs[0])
	}
	return false
}

// mapKeys reads propertyNames of an object schema without declared
// properties (patternProperties: objectPatterns): the language of its keys
// and the schema of their values (nil, nil without propertyNames).
func (c *schemaCompiler) mapKeys(s *jsonValue, path string) (key *Expr, val *jsonValue, err error) {
	pn := s.get("propertyNames")
	if pn == nil {
		return nil, nil, nil
	}
	kw := "propertyNames"
	declared := (s.get("properties") != nil && len(s.get("properties").obj) > 0) || (s.get("required") != nil && len(s.get("required").arr) > 0)
	if declared {
		// The keys left would be the names' language less the declared
		// names, and a declared name outside it forbidden: not built.
		return nil, nil, unsupported(path, kw, "together with declared or required properties")
	}
	keySchema := pn
	val = s.get("additionalProperties")
	if keySchema.kind == jBool {
		if !keySchema.b {
			return Never(), val, nil // no key is allowed: only {}
		}
		return c.anyString(), val, nil
	}
	if keySchema.kind != jObject {
		return nil, nil, schemaErr(path, "%s must be a schema", kw)
	}
	// Keys are strings: the key schema's strings (quoted, in the
	// canonical encoding keys share with string values) are the keys.
	key, err = c.compile(allOfValue(keySchema, jObj(jsonMember{"type", jStr("string")})), childPath(path, kw))
	if err != nil {
		return nil, nil, err
	}
	if val == nil {
		val = &jsonValue{kind: jBool, b: true}
	}
	return key, val, nil
}

// declaresProperties reports whether s's properties name a property an
// object may have (properties: {a: false}, written by negation and
// dependencies for "a absent", declares nothing: strict mode leaves such
// an object open).
func declaresProperties(s *jsonValue) bool {
	for _, m := range s.get("properties").objMembers() {
		if !isFalseSchema(m.val) {
			return true
		}
	}
	return false
}

// objPattern is one patternProperties entry: its automaton and schema.
type objPattern struct {
	src string
	d   *dfa
	val *jsonValue
}

// maxObjectPatterns bounds the patternProperties entries built (the keys
// are split by the subset of patterns they match: 2^n languages).
const maxObjectPatterns = 3

// objectPatterns reads patternProperties for patternMembers (nil when
// absent, or when every pattern's schema is true and nothing constrains
// the other keys: no constraint at all).
func (c *schemaCompiler) objectPatterns(s *jsonValue, path string) ([]objPattern, error) {
	pp := s.get("patternProperties")
	if pp == nil {
		return nil, nil
	}
	if pp.kind != jObject {
		return nil, schemaErr(path, "patternProperties must be an object")
	}
	allTrue := true
	for _, m := range pp.obj {
		allTrue = allTrue && isTrueSchema(m.val)
	}
	if allTrue && s.get("additionalProperties") == nil && !(c.opts.StrictProperties && declaresProperties(s)) {
		return nil, nil
	}
	if len(pp.obj) == 0 {
		return nil, nil
	}
	if len(pp.obj) > maxObjectPatterns {
		return nil, unsupported(path, "patternProperties", fmt.Sprintf("more than %d patterns", maxObjectPatterns))
	}
	var out []objPattern
	for _, m := range pp.obj {
		branches, err := parseRegex(m.key)
		if err != nil {
			return nil, unsupported(childPath(path, "patternProperties"), "pattern", err.Error())
		}
		d, err := patternDFA(branches)
		if err != nil {
			return nil, unsupported(path, "patternProperties", "a pattern whose automaton is too large")
		}
		out = append(out, objPattern{src: m.key, d: d.minimize(), val: m.val})
	}
	return out, nil
}

// patternMembers returns the rule of one additional member of an object
// with patternProperties: keys other than the declared names, split by
// the subset S of patterns they match (the language of each S: the
// intersection of its patterns' automata and the complements of the
// others', less the names), the value answering to every pattern of S,
// or to additionalProperties (addl: Never when no other key is allowed)
// for keys no pattern matches. nil when no key is left.
func (c *schemaCompiler) patternMembers(pats []objPattern, names []string, addl *Expr, kv func(key, val *Expr) *Expr, path string) (*Expr, error) {
	notNames := finiteDFA(names).complement()
	var alts []*Expr
	for mask := 0; mask < 1<<len(pats); mask++ {
		d := notNames
		var sch *jsonValue
		var err error
		for i, pt := range pats {
			pd := pt.d
			if mask&(1<<i) != 0 {
				if sch == nil {
					sch = pt.val
				} else {
					sch = allOfValue(sch, pt.val)
				}
			} else {
				pd = pd.complement()
			}
			if d, err = intersect(d, pd); err != nil {
				return nil, unsupported(path, "patternProperties", "patterns whose key languages need too large an automaton")
			}
		}
		d = d.minimize()
		if d.isEmpty() {
			continue
		}
		val := addl
		if sch != nil {
			if val, err = c.compile(sch, childPath(path, "patternProperties")); err != nil {
				return nil, err
			}
		}
		if val.IsNever() {
			continue
		}
		var key *Expr
		if len(d.edges) <= maxDFAExprStates {
			if e, err := d.toExprLimit(maxDFAExprNodesSmall); err == nil {
				key = Seq(Lit(`"`), jsonEncodeExpr(e), Lit(`"`))
			}
		}
		if key == nil {
			key = Seq(Lit(`"`), &Expr{Op: OpJSONChars, Auto: d}, Lit(`"`))
		}
		alts = append(alts, kv(key, val))
	}
	if len(alts) == 0 {
		return nil, nil
	}
	i := c.newRule("member" + path)
	c.g.Rules[i].Body = Alt(alts...)
	return Ref(i), nil
}
