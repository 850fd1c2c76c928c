package grammar

// Grammar pieces for JSON text in the canonical forms the schema compiler
// emits: strings with the fewest escapes (one encoding per code point:
// '"' and '\' escaped, \b \f \n \r \t, \u00xx for other controls in
// lower-case hex, everything else raw UTF-8), no \/ and no \u escape of a
// printable character. Because each decoded string has exactly one
// encoding, "a string not equal to these keys" and "a string matching this
// pattern" are exact over the text.

// jsonRaw is the code points written as themselves inside a JSON string.
var jsonRaw = NewClass(RuneRange{0x20, '"' - 1}, RuneRange{'"' + 1, '\\' - 1}, RuneRange{'\\' + 1, 0x10FFFF})

// jsonEscapeOf returns the canonical escape of a code point that is not
// written raw.
func jsonEscapeOf(r rune) string { return string(appendJSONRune(nil, r)) }

// jsonStringChar returns one canonical string character (any code point).
func jsonStringChar() *Expr {
	return Alt(
		&Expr{Op: OpClass, Ranges: jsonRaw},
		Seq(Lit(`\`), Class(RuneRange{'"', '"'}, RuneRange{'\\', '\\'}, RuneRange{'b', 'b'}, RuneRange{'f', 'f'},
			RuneRange{'n', 'n'}, RuneRange{'r', 'r'}, RuneRange{'t', 't'})),
		Seq(Lit(`\u00`), Alt(
			Seq(Lit("0"), Class(RuneRange{'0', '7'}, RuneRange{'b', 'b'}, RuneRange{'e', 'f'})),
			Seq(Lit("1"), Class(RuneRange{'0', '9'}, RuneRange{'a', 'f'})))),
	)
}

// jsonEncodeClass returns the canonical encodings of the code points in rs.
func jsonEncodeClass(rs []RuneRange) *Expr {
	var alts []*Expr
	if raw := intersectClass(rs, jsonRaw); len(raw) > 0 {
		alts = append(alts, &Expr{Op: OpClass, Ranges: raw})
	}
	for _, r := range classMinus(rs, jsonRaw) {
		for c := r.Lo; c <= r.Hi; c++ {
			alts = append(alts, Lit(jsonEscapeOf(c)))
		}
	}
	return Alt(alts...)
}

// jsonEncodeClassCompact is jsonEncodeClass with the escapes factored
// (\ then one letter; \u00 then two hex digits), the same language in
// fewer automaton states: for string automata (OpJSONChars), which spell
// a class per edge.
func jsonEncodeClassCompact(rs []RuneRange) *Expr {
	var alts []*Expr
	if raw := intersectClass(rs, jsonRaw); len(raw) > 0 {
		alts = append(alts, &Expr{Op: OpClass, Ranges: raw})
	}
	var short []RuneRange
	var hex [2][]RuneRange
	for _, r := range classMinus(rs, jsonRaw) {
		for c := r.Lo; c <= r.Hi; c++ {
			esc := jsonEscapeOf(c) // \x or \u00hh
			if len(esc) == 2 {
				short = append(short, RuneRange{rune(esc[1]), rune(esc[1])})
			} else {
				hi := esc[4] - '0'
				hex[hi] = append(hex[hi], RuneRange{rune(esc[5]), rune(esc[5])})
			}
		}
	}
	if len(short) > 0 {
		alts = append(alts, Seq(Lit(`\`), Class(short...)))
	}
	var hexAlts []*Expr
	for hi, lows := range hex {
		if len(lows) > 0 {
			hexAlts = append(hexAlts, Seq(Lit(string(rune('0'+hi))), Class(lows...)))
		}
	}
	if len(hexAlts) > 0 {
		alts = append(alts, Seq(Lit(`\u00`), Alt(hexAlts...)))
	}
	return Alt(alts...)
}

// jsonEncodeText returns the canonical encoding of a decoded string (no quotes).
func jsonEncodeText(s string) string {
	b := appendJSONString(nil, s)
	return string(b[1 : len(b)-1])
}

// jsonEncodeExpr maps an Expr over decoded text (literals and code point
// classes, as patterns compile to) to the Expr of its canonical JSON string
// content.
func jsonEncodeExpr(e *Expr) *Expr {
	switch e.Op {
	case OpJSONChars:
		return e // encoded already
	case OpLit:
		return Lit(jsonEncodeText(e.Lit))
	case OpClass:
		return jsonEncodeClass(e.Ranges)
	case OpSeq:
		subs := make([]*Expr, len(e.Subs))
		for i, s := range e.Subs {
			subs[i] = jsonEncodeExpr(s)
		}
		return Seq(subs...)
	case OpAlt:
		subs := make([]*Expr, len(e.Subs))
		for i, s := range e.Subs {
			subs[i] = jsonEncodeExpr(s)
		}
		if len(subs) == 0 {
			return Never()
		}
		return Alt(subs...)
	case OpRepeat:
		return Repeat(jsonEncodeExpr(e.Subs[0]), e.Min, e.Max)
	}
	return e // OpRef: not produced by patterns
}

// notInSet returns decoded strings (as a code point Expr) that are none of
// keys: the complement of a finite set, built along the keys' trie.
func notInSet(keys []string) *Expr {
	type node struct {
		end  bool
		next map[rune]*node
		ord  []rune
	}
	root := &node{next: map[rune]*node{}}
	for _, k := range keys {
		n := root
		for _, r := range k {
			c, ok := n.next[r]
			if !ok {
				c = &node{next: map[rune]*node{}}
				n.next[r] = c
				n.ord = append(n.ord, r)
			}
			n = c
		}
		n.end = true
	}
	any := Star(Class(RuneRange{0, 0x10FFFF}))
	var build func(n *node) *Expr
	build = func(n *node) *Expr {
		var alts []*Expr
		if !n.end {
			alts = append(alts, Lit(""))
		}
		var firsts []RuneRange
		for _, r := range n.ord {
			firsts = append(firsts, RuneRange{r, r})
			alts = append(alts, Seq(Lit(string(r)), build(n.next[r])))
		}
		if other := NegateClass(firsts); len(other) > 0 {
			alts = append(alts, Seq(&Expr{Op: OpClass, Ranges: other}, any))
		}
		return Alt(alts...)
	}
	return build(root)
}
