package grammar

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// SyntaxError is a GBNF parse error at a 1-based line and column (columns
// count bytes).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("grammar: %d:%d: %s", e.Line, e.Col, e.Msg)
}

// Limits of the GBNF reader, so that hostile text cannot exhaust the stack.
const (
	maxGBNFNesting = 200       // nested groups
	maxGBNFCount   = 1_000_000 // a repetition bound
)

// ParseGBNF reads a grammar in llama.cpp's GBNF format:
//
//	root   ::= object                 # a rule: name ::= alternatives
//	object ::= "{" ws ( pair ( "," ws pair )* )? "}"
//	pair   ::= [a-z]+ ":" ws ("true" | "false")
//	ws     ::= [ \t\n]{0,4}
//
// Names are [a-zA-Z0-9_-]+; the start rule is "root". Terms: "literal"
// (escapes \n \r \t \\ \" \xHH \uHHHH \UHHHHHHHH; \x, \u and \U name code
// points, written as UTF-8), character classes [a-z] and negated [^"\\]
// over code points, . (any code point), rule names, ( groups ); postfix
// *, +, ?, {m}, {m,}, {m,n}. Alternatives are separated by |; a rule ends at
// a newline that is not inside a group or right after a |. # starts a comment
// that runs to the end of the line. Errors name the line and column.
func ParseGBNF(src string) (*Grammar, error) {
	p := &gbnfParser{src: src, names: map[string]int{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.g, nil
}

type gbnfParser struct {
	src     string
	pos     int
	g       *Grammar
	names   map[string]int // rule name → index
	defined []bool         // per rule: has a definition
	usedAt  []int          // per rule: offset of its first use (for errors)
	depth   int
}

func (p *gbnfParser) errAt(pos int, format string, args ...any) error {
	line, col := 1, 1
	for i := 0; i < pos && i < len(p.src); i++ {
		if p.src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *gbnfParser) rule(name string, at int) int {
	if i, ok := p.names[name]; ok {
		return i
	}
	i := len(p.g.Rules)
	p.names[name] = i
	p.g.Rules = append(p.g.Rules, Rule{Name: name})
	p.defined = append(p.defined, false)
	p.usedAt = append(p.usedAt, at)
	return i
}

func (p *gbnfParser) parse() error {
	p.g = &Grammar{}
	for {
		p.skipSpace(true)
		if p.pos >= len(p.src) {
			break
		}
		start := p.pos
		name := p.name()
		if name == "" {
			return p.errAt(p.pos, "expected a rule name, found %s", p.show())
		}
		p.skipSpace(false)
		if !p.eat("::=") {
			return p.errAt(p.pos, "expected ::= after rule name %q, found %s", name, p.show())
		}
		i := p.rule(name, start)
		if p.defined[i] {
			return p.errAt(start, "rule %q defined twice", name)
		}
		p.defined[i] = true
		p.skipSpace(true)
		body, err := p.alternatives(false)
		if err != nil {
			return err
		}
		p.g.Rules[i].Body = body
		p.skipSpace(false)
		if p.pos < len(p.src) && p.src[p.pos] != '\n' {
			return p.errAt(p.pos, "unexpected %s at the end of rule %q", p.show(), name)
		}
	}
	root, ok := p.names["root"]
	if !ok || !p.defined[root] {
		return p.errAt(len(p.src), "no rule named root")
	}
	for i, d := range p.defined {
		if !d {
			return p.errAt(p.usedAt[i], "undefined rule %q", p.g.Rules[i].Name)
		}
	}
	p.g.Root = root
	return p.g.Validate()
}

// show describes the text at the cursor for an error message.
func (p *gbnfParser) show() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	if r == '\n' {
		return "end of line"
	}
	return strconv.QuoteRune(r)
}

func (p *gbnfParser) eat(s string) bool {
	if len(p.src)-p.pos >= len(s) && p.src[p.pos:p.pos+len(s)] == s {
		p.pos += len(s)
		return true
	}
	return false
}

// skipSpace skips blanks and comments, and newlines too when newlines is set.
func (p *gbnfParser) skipSpace(newlines bool) {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\r':
			p.pos++
		case c == '\n' && newlines:
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func (p *gbnfParser) name() string {
	start := p.pos
	for p.pos < len(p.src) && isNameChar(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// alternatives parses seq ("|" seq)*; nested is set inside a group, where
// newlines are blanks.
func (p *gbnfParser) alternatives(nested bool) (*Expr, error) {
	var alts []*Expr
	for {
		s, err := p.sequence(nested)
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
		p.skipSpace(nested)
		if !p.eat("|") {
			break
		}
		p.skipSpace(true)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &Expr{Op: OpAlt, Subs: alts}, nil
}

func (p *gbnfParser) sequence(nested bool) (*Expr, error) {
	var items []*Expr
	for {
		p.skipSpace(nested)
		if p.pos >= len(p.src) {
			break
		}
		c := p.src[p.pos]
		if c == '|' || c == ')' || c == '\n' {
			break
		}
		start := p.pos
		item, err := p.term(nested)
		if err != nil {
			return nil, err
		}
		if item == nil {
			// A name followed by ::= is the next rule: the caller sees it
			// as unexpected text unless we stop before it.
			p.pos = start
			break
		}
		item, err = p.postfix(item)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	switch len(items) {
	case 0:
		return Lit(""), nil
	case 1:
		return items[0], nil
	}
	return &Expr{Op: OpSeq, Subs: items}, nil
}

// term parses one term; it returns nil, nil at a name that starts a new rule.
func (p *gbnfParser) term(nested bool) (*Expr, error) {
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '"':
		return p.literal()
	case c == '[':
		return p.class()
	case c == '.':
		p.pos++
		return Class(RuneRange{0, utf8.MaxRune}), nil
	case c == '(':
		p.depth++
		if p.depth > maxGBNFNesting {
			return nil, p.errAt(start, "groups nested deeper than %d", maxGBNFNesting)
		}
		p.pos++
		p.skipSpace(true)
		e, err := p.alternatives(true)
		if err != nil {
			return nil, err
		}
		p.skipSpace(true)
		if !p.eat(")") {
			return nil, p.errAt(p.pos, "expected ) to close the group at %s, found %s", p.where(start), p.show())
		}
		p.depth--
		if e.Op == OpSeq || e.Op == OpAlt {
			return e, nil
		}
		return e, nil
	case isNameChar(c):
		name := p.name()
		save := p.pos
		p.skipSpace(nested)
		if p.eat("::=") {
			if nested {
				return nil, p.errAt(start, "rule %q defined inside a group", name)
			}
			return nil, nil
		}
		p.pos = save
		return Ref(p.rule(name, start)), nil
	default:
		return nil, p.errAt(start, "unexpected %s", p.show())
	}
}

func (p *gbnfParser) where(pos int) string {
	e := p.errAt(pos, "").(*SyntaxError)
	return fmt.Sprintf("%d:%d", e.Line, e.Col)
}

func (p *gbnfParser) postfix(x *Expr) (*Expr, error) {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '*':
			p.pos++
			x = &Expr{Op: OpRepeat, Subs: []*Expr{x}, Min: 0, Max: -1}
		case '+':
			p.pos++
			x = &Expr{Op: OpRepeat, Subs: []*Expr{x}, Min: 1, Max: -1}
		case '?':
			p.pos++
			x = &Expr{Op: OpRepeat, Subs: []*Expr{x}, Min: 0, Max: 1}
		case '{':
			start := p.pos
			p.pos++
			p.skipSpace(false)
			lo, ok := p.number()
			if !ok {
				return nil, p.errAt(p.pos, "expected a number in {m,n}, found %s", p.show())
			}
			hi := lo
			p.skipSpace(false)
			if p.eat(",") {
				p.skipSpace(false)
				if p.pos < len(p.src) && p.src[p.pos] == '}' {
					hi = -1
				} else if hi, ok = p.number(); !ok {
					return nil, p.errAt(p.pos, "expected a number or } after the comma in {m,n}, found %s", p.show())
				}
				p.skipSpace(false)
			}
			if !p.eat("}") {
				return nil, p.errAt(p.pos, "expected } to close {m,n}, found %s", p.show())
			}
			if lo > maxGBNFCount || hi > maxGBNFCount {
				return nil, p.errAt(start, "repetition bound above %d", maxGBNFCount)
			}
			if hi >= 0 && hi < lo {
				return nil, p.errAt(start, "repetition {%d,%d}: the upper bound is below the lower one", lo, hi)
			}
			x = &Expr{Op: OpRepeat, Subs: []*Expr{x}, Min: lo, Max: hi}
		default:
			return x, nil
		}
	}
	return x, nil
}

func (p *gbnfParser) number() (int, bool) {
	start := p.pos
	n := 0
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		if n <= maxGBNFCount {
			n = n*10 + int(p.src[p.pos]-'0')
		}
		p.pos++
	}
	return n, p.pos > start
}

func (p *gbnfParser) literal() (*Expr, error) {
	start := p.pos
	p.pos++ // opening quote
	var buf []byte
	for {
		if p.pos >= len(p.src) || p.src[p.pos] == '\n' {
			return nil, p.errAt(start, "unterminated string literal")
		}
		if p.src[p.pos] == '"' {
			p.pos++
			return Lit(string(buf)), nil
		}
		r, err := p.char()
		if err != nil {
			return nil, err
		}
		buf = utf8.AppendRune(buf, r)
	}
}

// char reads one possibly escaped code point of a literal or class.
func (p *gbnfParser) char() (rune, error) {
	start := p.pos
	c := p.src[p.pos]
	if c != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if r == utf8.RuneError && n <= 1 {
			return 0, p.errAt(start, "invalid UTF-8")
		}
		p.pos += n
		return r, nil
	}
	p.pos++
	if p.pos >= len(p.src) {
		return 0, p.errAt(start, "unfinished escape")
	}
	e := p.src[p.pos]
	p.pos++
	switch e {
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'x':
		return p.hex(start, 2)
	case 'u':
		return p.hex(start, 4)
	case 'U':
		return p.hex(start, 8)
	}
	if e > ' ' && e < 0x7f && !(e >= 'a' && e <= 'z' || e >= 'A' && e <= 'Z' || e >= '0' && e <= '9') {
		return rune(e), nil // \\ \" \[ \] \- \^ and other punctuation
	}
	return 0, p.errAt(start, "unknown escape \\%c", e)
}

func (p *gbnfParser) hex(start, n int) (rune, error) {
	if len(p.src)-p.pos < n {
		return 0, p.errAt(start, "escape needs %d hex digits", n)
	}
	v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
	if err != nil {
		return 0, p.errAt(start, "escape needs %d hex digits", n)
	}
	p.pos += n
	if v > utf8.MaxRune || (v >= surrLo && v <= surrHi) {
		return 0, p.errAt(start, "escape names U+%X, which is not a Unicode scalar value", v)
	}
	return rune(v), nil
}

func (p *gbnfParser) class() (*Expr, error) {
	start := p.pos
	p.pos++ // [
	negate := p.eat("^")
	var rs []RuneRange
	for {
		if p.pos >= len(p.src) || p.src[p.pos] == '\n' {
			return nil, p.errAt(start, "unterminated character class")
		}
		if p.src[p.pos] == ']' {
			p.pos++
			break
		}
		lo, err := p.char()
		if err != nil {
			return nil, err
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
			at := p.pos
			p.pos++
			if hi, err = p.char(); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, p.errAt(at, "class range %q-%q is reversed", lo, hi)
			}
		}
		rs = append(rs, RuneRange{lo, hi})
	}
	if negate {
		return &Expr{Op: OpClass, Ranges: NegateClass(rs)}, nil
	}
	return &Expr{Op: OpClass, Ranges: NewClass(rs...)}, nil
}
