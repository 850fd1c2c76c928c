package grammar

import (
	"fmt"
	"strings"
)

// Op is the kind of an Expr node.
type Op uint8

// Expr operators.
const (
	OpLit    Op = iota // the bytes of Lit, in order ("" matches the empty string)
	OpClass            // one code point in Ranges, written as UTF-8
	OpSeq              // Subs one after another
	OpAlt              // any one of Subs (no Subs: matches nothing)
	OpRepeat           // Subs[0] between Min and Max times (Max < 0: unbounded)
	OpRef              // the rule Rule (by index into Grammar.Rules)
	// OpJSONChars is the content of a JSON string (no quotes, each
	// character in its canonical encoding) whose decoded text Auto
	// accepts: a deterministic automaton over code points, for languages
	// that are small as automata but large as expressions (a pattern
	// intersected with length bounds). See regexdfa.go.
	OpJSONChars
)

// Expr is a node of a rule's right-hand side. Exprs are trees; a grammar
// does not share nodes between rules (Compile does not care, but String
// prints each node where it stands).
type Expr struct {
	Op     Op
	Lit    string      // OpLit: raw bytes
	Ranges []RuneRange // OpClass: sorted, disjoint, non-adjacent code point ranges (see NewClass)
	Subs   []*Expr     // OpSeq, OpAlt: parts; OpRepeat: the repeated expression
	Min    int         // OpRepeat: least count
	Max    int         // OpRepeat: greatest count, or -1 for no bound
	Rule   int         // OpRef: index of the rule
	Auto   *dfa        // OpJSONChars: the automaton (minimal, live states only)
}

// Rule is a named nonterminal.
type Rule struct {
	Name string
	Body *Expr
}

// Grammar is a context-free grammar over bytes: rules whose bodies are Expr
// trees, and the index of the start rule. Code point classes stand for their
// UTF-8 encodings, so every string the grammar derives from classes and
// valid UTF-8 literals is valid UTF-8.
type Grammar struct {
	Rules []Rule
	Root  int
}

// Lit returns a literal node.
func Lit(s string) *Expr { return &Expr{Op: OpLit, Lit: s} }

// Seq returns a sequence node (flattening nested sequences and dropping
// empty literals); one part is returned as is.
func Seq(parts ...*Expr) *Expr {
	var subs []*Expr
	for _, p := range parts {
		switch {
		case p.Op == OpSeq:
			subs = append(subs, p.Subs...)
		case p.Op == OpLit && p.Lit == "":
		default:
			subs = append(subs, p)
		}
	}
	// Merge adjacent literals.
	out := subs[:0]
	for _, s := range subs {
		if n := len(out); n > 0 && s.Op == OpLit && out[n-1].Op == OpLit {
			out[n-1] = Lit(out[n-1].Lit + s.Lit)
			continue
		}
		out = append(out, s)
	}
	switch len(out) {
	case 0:
		return Lit("")
	case 1:
		return out[0]
	}
	return &Expr{Op: OpSeq, Subs: out}
}

// Alt returns an alternation node (flattening nested alternations); one
// alternative is returned as is, none gives the empty language.
func Alt(alts ...*Expr) *Expr {
	var subs []*Expr
	for _, a := range alts {
		if a.Op == OpAlt {
			subs = append(subs, a.Subs...)
		} else {
			subs = append(subs, a)
		}
	}
	if len(subs) == 1 {
		return subs[0]
	}
	return &Expr{Op: OpAlt, Subs: subs}
}

// Never returns the empty language (no string matches).
func Never() *Expr { return &Expr{Op: OpAlt} }

// IsNever reports whether e is the empty alternation.
func (e *Expr) IsNever() bool { return e.Op == OpAlt && len(e.Subs) == 0 }

// Repeat returns x repeated min..max times (max < 0: unbounded).
func Repeat(x *Expr, min, max int) *Expr {
	if max == 1 && min == 1 {
		return x
	}
	if max == 0 {
		return Lit("")
	}
	return &Expr{Op: OpRepeat, Subs: []*Expr{x}, Min: min, Max: max}
}

// Opt returns x?.
func Opt(x *Expr) *Expr { return Repeat(x, 0, 1) }

// Star returns x*.
func Star(x *Expr) *Expr { return Repeat(x, 0, -1) }

// Plus returns x+.
func Plus(x *Expr) *Expr { return Repeat(x, 1, -1) }

// Ref returns a reference to rule i.
func Ref(i int) *Expr { return &Expr{Op: OpRef, Rule: i} }

// Class returns a class node for the given ranges (normalized; see NewClass).
func Class(r ...RuneRange) *Expr { return &Expr{Op: OpClass, Ranges: NewClass(r...)} }

// Validate checks that the grammar is well formed: a root in range, every
// rule with a body, every reference in range, repetition bounds sane, class
// ranges normalized.
func (g *Grammar) Validate() error {
	if len(g.Rules) == 0 {
		return fmt.Errorf("grammar: no rules")
	}
	if g.Root < 0 || g.Root >= len(g.Rules) {
		return fmt.Errorf("grammar: root rule %d out of range", g.Root)
	}
	for i, r := range g.Rules {
		if r.Body == nil {
			return fmt.Errorf("grammar: rule %d (%s) has no body", i, r.Name)
		}
		if err := g.validateExpr(r.Body, 0); err != nil {
			return fmt.Errorf("grammar: rule %s: %w", r.Name, err)
		}
	}
	return nil
}

const maxExprDepth = 1000 // nesting of Expr trees (a bound for the recursive passes)

func (g *Grammar) validateExpr(e *Expr, depth int) error {
	if depth > maxExprDepth {
		return fmt.Errorf("expression nested deeper than %d", maxExprDepth)
	}
	switch e.Op {
	case OpLit:
	case OpClass:
		if !classNormalized(e.Ranges) {
			return fmt.Errorf("class ranges not normalized")
		}
	case OpSeq, OpAlt:
		for _, s := range e.Subs {
			if s == nil {
				return fmt.Errorf("nil sub-expression")
			}
			if err := g.validateExpr(s, depth+1); err != nil {
				return err
			}
		}
	case OpRepeat:
		if len(e.Subs) != 1 || e.Subs[0] == nil {
			return fmt.Errorf("repeat needs one sub-expression")
		}
		if e.Min < 0 || (e.Max >= 0 && e.Max < e.Min) {
			return fmt.Errorf("bad repetition bounds {%d,%d}", e.Min, e.Max)
		}
		return g.validateExpr(e.Subs[0], depth+1)
	case OpRef:
		if e.Rule < 0 || e.Rule >= len(g.Rules) {
			return fmt.Errorf("reference to rule %d out of range", e.Rule)
		}
	case OpJSONChars:
		if e.Auto == nil || len(e.Auto.edges) == 0 {
			return fmt.Errorf("string automaton missing")
		}
	default:
		return fmt.Errorf("unknown op %d", e.Op)
	}
	return nil
}

// String returns the grammar as GBNF text that ParseGBNF reads back to an
// equivalent grammar (the root rule is printed first and named root).
func (g *Grammar) String() string {
	var b strings.Builder
	names := g.printNames()
	order := []int{g.Root}
	for i := range g.Rules {
		if i != g.Root {
			order = append(order, i)
		}
	}
	for _, i := range order {
		b.WriteString(names[i])
		b.WriteString(" ::= ")
		writeExpr(&b, g.Rules[i].Body, names, 0)
		b.WriteByte('\n')
	}
	return b.String()
}

// printNames gives each rule a unique GBNF name ([a-zA-Z0-9-]+), the root
// "root", others their own name where it is valid and free.
func (g *Grammar) printNames() []string {
	names := make([]string, len(g.Rules))
	used := map[string]bool{"root": true}
	names[g.Root] = "root"
	for i, r := range g.Rules {
		if i == g.Root {
			continue
		}
		n := sanitizeName(r.Name)
		if n == "" || used[n] {
			base := n
			if base == "" {
				base = "r"
			}
			for k := 1; ; k++ {
				c := fmt.Sprintf("%s-%d", base, k)
				if !used[c] {
					n = c
					break
				}
			}
		}
		used[n] = true
		names[i] = n
	}
	return names
}

func sanitizeName(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Precedence levels for printing: alternation < sequence < postfix.
func writeExpr(b *strings.Builder, e *Expr, names []string, prec int) {
	switch e.Op {
	case OpJSONChars:
		// As an expression: possibly long, but the same language.
		x, err := e.Auto.toExprLimit(-1)
		if err != nil {
			x = Never()
		}
		writeExpr(b, jsonEncodeExpr(x), names, prec)
	case OpLit:
		writeLit(b, e.Lit)
	case OpClass:
		writeClass(b, e.Ranges)
	case OpRef:
		b.WriteString(names[e.Rule])
	case OpSeq:
		if prec > 1 {
			b.WriteByte('(')
		}
		for i, s := range e.Subs {
			if i > 0 {
				b.WriteByte(' ')
			}
			writeExpr(b, s, names, 2)
		}
		if prec > 1 {
			b.WriteByte(')')
		}
	case OpAlt:
		if len(e.Subs) == 0 {
			b.WriteString("[^\\x00-\\U0010FFFF]") // an empty class: matches nothing
			return
		}
		if prec > 0 {
			b.WriteByte('(')
		}
		for i, s := range e.Subs {
			if i > 0 {
				b.WriteString(" | ")
			}
			writeExpr(b, s, names, 1)
		}
		if prec > 0 {
			b.WriteByte(')')
		}
	case OpRepeat:
		writeExpr(b, e.Subs[0], names, 3)
		switch {
		case e.Min == 0 && e.Max == 1:
			b.WriteByte('?')
		case e.Min == 0 && e.Max < 0:
			b.WriteByte('*')
		case e.Min == 1 && e.Max < 0:
			b.WriteByte('+')
		case e.Max < 0:
			fmt.Fprintf(b, "{%d,}", e.Min)
		case e.Min == e.Max:
			fmt.Fprintf(b, "{%d}", e.Min)
		default:
			fmt.Fprintf(b, "{%d,%d}", e.Min, e.Max)
		}
	}
}

func writeLit(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
			i++
		case c == '\n':
			b.WriteString(`\n`)
			i++
		case c == '\r':
			b.WriteString(`\r`)
			i++
		case c == '\t':
			b.WriteString(`\t`)
			i++
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(b, `\x%02X`, c)
			i++
		case c < 0x80:
			b.WriteByte(c)
			i++
		default:
			// Print valid UTF-8 as is; a stray byte as \x, which GBNF reads
			// back as that byte.
			r, n := decodeRune(s[i:])
			if r < 0 {
				fmt.Fprintf(b, `\x%02X`, c)
				i++
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	b.WriteByte('"')
}

func writeClass(b *strings.Builder, rs []RuneRange) {
	b.WriteByte('[')
	if len(rs) == 0 {
		b.WriteString("^\\x00-\\U0010FFFF")
	}
	for _, r := range rs {
		writeClassRune(b, r.Lo)
		if r.Hi != r.Lo {
			b.WriteByte('-')
			writeClassRune(b, r.Hi)
		}
	}
	b.WriteByte(']')
}

func writeClassRune(b *strings.Builder, r rune) {
	switch {
	case r == ']' || r == '[' || r == '\\' || r == '-' || r == '^':
		b.WriteByte('\\')
		b.WriteRune(r)
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x%02X`, r)
	case r < 0x80:
		b.WriteRune(r)
	case r <= 0xFFFF:
		fmt.Fprintf(b, `\u%04X`, r)
	default:
		fmt.Fprintf(b, `\U%08X`, r)
	}
}
