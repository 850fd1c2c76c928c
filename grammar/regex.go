package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A regular expression (ECMA-262 syntax, the subset JSON Schema patterns
// use) compiled to an Expr over code points: the strings it matches, as text
// (Lit holds UTF-8, Class code points). Supported: literals, escapes (\d \D
// \w \W \s \S \t \n \r \v \f \0 \xHH \uHHHH, surrogate pairs as one code
// point, escaped punctuation), classes [...] and [^...] with ranges, . (any
// code point but a line terminator), groups (...) (?:...) (?<name>...),
// alternation, quantifiers * + ? {n} {n,} {n,m} and their lazy forms (the
// same language), ^ at the start and $ at the end of a top-level
// alternative. Refused, by name: lookaround, backreferences, \b \B, \p \P,
// \c, anchors elsewhere. Matching is by code point (the u flag's view).

// regexBranch is one top-level alternative of a pattern.
type regexBranch struct {
	startAnchor, endAnchor bool
	body                   *Expr
}

// regexError is a pattern the compiler does not support or cannot read.
type regexError struct {
	msg string
}

func (e *regexError) Error() string { return e.msg }

// maxRegexCount bounds {n,m} counts in a pattern.
const maxRegexCount = 1000

func parseRegex(src string) ([]regexBranch, error) {
	p := &regexParser{src: []rune(src)}
	if !utf8.ValidString(src) {
		return nil, &regexError{"pattern is not valid UTF-8"}
	}
	var branches []regexBranch
	for {
		var br regexBranch
		if p.peek('^') {
			p.i++
			br.startAnchor = true
		}
		body, err := p.concat(0, true)
		if err != nil {
			return nil, err
		}
		if p.peek('$') {
			p.i++
			br.endAnchor = true
		}
		br.body = body
		branches = append(branches, br)
		if p.i >= len(p.src) {
			return branches, nil
		}
		switch p.src[p.i] {
		case '|':
			p.i++
		case '$':
			return nil, &regexError{fmt.Sprintf("anchor $ at offset %d is not at the end of the pattern", p.i)}
		case ')':
			return nil, &regexError{fmt.Sprintf("unbalanced ) at offset %d", p.i)}
		default:
			return nil, &regexError{fmt.Sprintf("unexpected %q at offset %d", p.src[p.i], p.i)}
		}
	}
}

type regexParser struct {
	src []rune
	i   int
}

func (p *regexParser) peek(r rune) bool { return p.i < len(p.src) && p.src[p.i] == r }

func (p *regexParser) alternation(depth int) (*Expr, error) {
	var alts []*Expr
	for {
		e, err := p.concat(depth, false)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
		if !p.peek('|') {
			return Alt(alts...), nil
		}
		p.i++
	}
}

// concat parses atoms up to |, ) or the end; at the top level it also stops
// before a final $.
func (p *regexParser) concat(depth int, top bool) (*Expr, error) {
	if depth > 100 {
		return nil, &regexError{"groups nested deeper than 100"}
	}
	var parts []*Expr
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c == '|' || c == ')' {
			break
		}
		if c == '$' {
			if top && p.i == len(p.src)-1 || top && p.i+1 < len(p.src) && p.src[p.i+1] == '|' {
				break
			}
			return nil, &regexError{fmt.Sprintf("anchor $ at offset %d is not at the end of a top-level alternative", p.i)}
		}
		if c == '^' {
			return nil, &regexError{fmt.Sprintf("anchor ^ at offset %d is not at the start of a top-level alternative", p.i)}
		}
		atom, err := p.atom(depth)
		if err != nil {
			return nil, err
		}
		if atom, err = p.quantifier(atom); err != nil {
			return nil, err
		}
		parts = append(parts, atom)
	}
	return Seq(parts...), nil
}

func (p *regexParser) quantifier(atom *Expr) (*Expr, error) {
	if p.i >= len(p.src) {
		return atom, nil
	}
	lo, hi := -1, -1
	switch p.src[p.i] {
	case '*':
		lo, hi = 0, -1
		p.i++
	case '+':
		lo, hi = 1, -1
		p.i++
	case '?':
		lo, hi = 0, 1
		p.i++
	case '{':
		save := p.i
		p.i++
		a, ok := p.int()
		if !ok {
			p.i = save // Annex B: a { that starts no quantifier is a literal
			return atom, nil
		}
		b := a
		if p.peek(',') {
			p.i++
			if p.peek('}') {
				b = -1
			} else if b, ok = p.int(); !ok {
				p.i = save
				return atom, nil
			}
		}
		if !p.peek('}') {
			p.i = save
			return atom, nil
		}
		p.i++
		if a > maxRegexCount || b > maxRegexCount {
			return nil, &regexError{fmt.Sprintf("quantifier count above %d", maxRegexCount)}
		}
		if b >= 0 && b < a {
			return nil, &regexError{fmt.Sprintf("quantifier {%d,%d} out of order", a, b)}
		}
		lo, hi = a, b
	default:
		return atom, nil
	}
	if p.peek('?') {
		p.i++ // lazy: same language
	}
	if p.i < len(p.src) && (p.src[p.i] == '*' || p.src[p.i] == '+' || p.src[p.i] == '?' || p.src[p.i] == '{') {
		if p.src[p.i] != '{' {
			return nil, &regexError{fmt.Sprintf("nothing to repeat at offset %d", p.i)}
		}
	}
	return Repeat(atom, lo, hi), nil
}

func (p *regexParser) int() (int, bool) {
	start := p.i
	n := 0
	for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
		if n < 1<<20 {
			n = n*10 + int(p.src[p.i]-'0')
		}
		p.i++
	}
	return n, p.i > start
}

// Character sets of the escapes.
var (
	reDigit = []RuneRange{{'0', '9'}}
	reWord  = NewClass(RuneRange{'0', '9'}, RuneRange{'A', 'Z'}, RuneRange{'_', '_'}, RuneRange{'a', 'z'})
	reSpace = NewClass(RuneRange{'\t', '\r'}, RuneRange{' ', ' '}, RuneRange{0xA0, 0xA0}, RuneRange{0x1680, 0x1680},
		RuneRange{0x2000, 0x200A}, RuneRange{0x2028, 0x2029}, RuneRange{0x202F, 0x202F}, RuneRange{0x205F, 0x205F},
		RuneRange{0x3000, 0x3000}, RuneRange{0xFEFF, 0xFEFF})
	reLineTerm = NewClass(RuneRange{'\n', '\n'}, RuneRange{'\r', '\r'}, RuneRange{0x2028, 0x2029})
)

func (p *regexParser) atom(depth int) (*Expr, error) {
	c := p.src[p.i]
	switch c {
	case '(':
		start := p.i
		p.i++
		if p.peek('?') {
			switch {
			case p.i+1 < len(p.src) && p.src[p.i+1] == ':':
				p.i += 2
			case p.i+2 < len(p.src) && p.src[p.i+1] == '<' && p.src[p.i+2] != '=' && p.src[p.i+2] != '!':
				// Named group: skip the name.
				for p.i < len(p.src) && p.src[p.i] != '>' {
					p.i++
				}
				if p.i >= len(p.src) {
					return nil, &regexError{"unterminated group name"}
				}
				p.i++
			default:
				return nil, &regexError{fmt.Sprintf("lookaround (?%s at offset %d is not supported", string(p.src[p.i+1:min(p.i+3, len(p.src))]), start)}
			}
		}
		e, err := p.alternation(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.peek(')') {
			return nil, &regexError{fmt.Sprintf("unterminated group at offset %d", start)}
		}
		p.i++
		return e, nil
	case '[':
		return p.class()
	case '.':
		p.i++
		return &Expr{Op: OpClass, Ranges: NegateClass(reLineTerm)}, nil
	case '*', '+', '?':
		return nil, &regexError{fmt.Sprintf("nothing to repeat at offset %d", p.i)}
	case '\\':
		rs, r, err := p.escape(false)
		if err != nil {
			return nil, err
		}
		if rs != nil {
			return &Expr{Op: OpClass, Ranges: rs}, nil
		}
		return Lit(string(r)), nil
	}
	p.i++
	return Lit(string(c)), nil
}

// escape reads an escape at p.i (the backslash). It returns a set (for \d
// and the like) or one code point.
func (p *regexParser) escape(inClass bool) ([]RuneRange, rune, error) {
	start := p.i
	p.i++
	if p.i >= len(p.src) {
		return nil, 0, &regexError{"pattern ends in a backslash"}
	}
	e := p.src[p.i]
	p.i++
	switch e {
	case 'd':
		return reDigit, 0, nil
	case 'D':
		return NegateClass(reDigit), 0, nil
	case 'w':
		return reWord, 0, nil
	case 'W':
		return NegateClass(reWord), 0, nil
	case 's':
		return reSpace, 0, nil
	case 'S':
		return NegateClass(reSpace), 0, nil
	case 't':
		return nil, '\t', nil
	case 'n':
		return nil, '\n', nil
	case 'r':
		return nil, '\r', nil
	case 'v':
		return nil, '\v', nil
	case 'f':
		return nil, '\f', nil
	case '0':
		if p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			return nil, 0, &regexError{fmt.Sprintf("octal escape at offset %d is not supported", start)}
		}
		return nil, 0, nil
	case 'b':
		if inClass {
			return nil, '\b', nil
		}
		return nil, 0, &regexError{"word boundary \\b is not supported"}
	case 'B':
		return nil, 0, &regexError{"word boundary \\B is not supported"}
	case 'p', 'P':
		rs, err := p.property()
		if err != nil {
			return nil, 0, err
		}
		if e == 'P' {
			rs = NegateClass(rs)
		}
		return rs, 0, nil
	case 'c':
		// \cX: the control character X mod 32 (X a letter).
		if p.i < len(p.src) && (p.src[p.i] >= 'a' && p.src[p.i] <= 'z' || p.src[p.i] >= 'A' && p.src[p.i] <= 'Z') {
			p.i++
			return nil, p.src[p.i-1] % 32, nil
		}
		return nil, 0, &regexError{"control escape \\c without a letter is not supported"}
	case 'k':
		return nil, 0, &regexError{"backreference \\k is not supported"}
	case 'x':
		v, err := p.hexDigits(2)
		return nil, v, err
	case 'u':
		if p.peek('{') {
			return nil, 0, &regexError{"\\u{...} escapes are not supported"}
		}
		v, err := p.hexDigits(4)
		if err != nil {
			return nil, 0, err
		}
		if utf16.IsSurrogate(v) {
			// A surrogate pair written as two escapes is one code point.
			if v < 0xDC00 && p.i+1 < len(p.src) && p.src[p.i] == '\\' && p.src[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				lo, err := p.hexDigits(4)
				if err == nil {
					if r := utf16.DecodeRune(v, lo); r != utf8.RuneError {
						return nil, r, nil
					}
				}
				p.i = save
			}
			return nil, 0, &regexError{fmt.Sprintf("lone surrogate \\u%04X", v)}
		}
		return nil, v, nil
	}
	if e >= '1' && e <= '9' {
		return nil, 0, &regexError{fmt.Sprintf("backreference \\%c is not supported", e)}
	}
	if e < 0x80 && !(e >= 'a' && e <= 'z' || e >= 'A' && e <= 'Z' || e >= '0' && e <= '9' || e == '_') {
		return nil, e, nil // escaped punctuation
	}
	if inClass && e == '-' {
		return nil, e, nil
	}
	return nil, 0, &regexError{fmt.Sprintf("unknown escape \\%c", e)}
}

// property reads {Name} after \\p: a General_Category (short or long
// name, as ECMA-262 lists them: L, Letter, Nd, digit, ...) or a Script
// (Script=Greek, sc=Greek, or a bare script name), from Go's Unicode
// tables.
func (p *regexParser) property() ([]RuneRange, error) {
	if !p.peek('{') {
		return nil, &regexError{"\\p without {Name}"}
	}
	end := p.i
	for end < len(p.src) && p.src[end] != '}' {
		end++
	}
	if end >= len(p.src) {
		return nil, &regexError{"unterminated \\p{"}
	}
	name := string(p.src[p.i+1 : end])
	p.i = end + 1
	var table *unicode.RangeTable
	if k, v, ok := strings.Cut(name, "="); ok {
		switch k {
		case "Script", "sc", "Script_Extensions", "scx":
			table = unicode.Scripts[v]
		case "General_Category", "gc":
			table = unicode.Categories[generalCategory(v)]
		}
	} else if t := unicode.Categories[generalCategory(name)]; t != nil {
		table = t
	} else {
		table = unicode.Scripts[name]
	}
	if table == nil {
		return nil, &regexError{fmt.Sprintf("Unicode property \\p{%s} is not supported", name)}
	}
	var rs []RuneRange
	for _, r := range table.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			if r.Stride == 1 {
				rs = append(rs, RuneRange{rune(r.Lo), rune(r.Hi)})
				break
			}
			rs = append(rs, RuneRange{c, c})
		}
	}
	for _, r := range table.R32 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			if r.Stride == 1 {
				rs = append(rs, RuneRange{rune(r.Lo), rune(r.Hi)})
				break
			}
			rs = append(rs, RuneRange{c, c})
		}
	}
	return NewClass(rs...), nil
}

// generalCategory maps ECMA-262's General_Category names and aliases to
// Go's short names.
func generalCategory(n string) string {
	long := map[string]string{
		"Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
		"Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo",
		"Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me",
		"Number": "N", "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
		"Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd",
		"Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
		"Final_Punctuation": "Pf", "Other_Punctuation": "Po",
		"Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So",
		"Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp",
		"Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs",
		"Private_Use": "Co", "Unassigned": "Cn",
	}
	if s, ok := long[n]; ok {
		return s
	}
	return n
}

func (p *regexParser) hexDigits(n int) (rune, error) {
	if len(p.src)-p.i < n {
		return 0, &regexError{"short hex escape"}
	}
	v, err := strconv.ParseUint(string(p.src[p.i:p.i+n]), 16, 32)
	if err != nil {
		return 0, &regexError{"bad hex escape"}
	}
	p.i += n
	return rune(v), nil
}

func (p *regexParser) class() (*Expr, error) {
	start := p.i
	p.i++
	negate := false
	if p.peek('^') {
		negate = true
		p.i++
	}
	var rs []RuneRange
	for {
		if p.i >= len(p.src) {
			return nil, &regexError{fmt.Sprintf("unterminated class at offset %d", start)}
		}
		if p.src[p.i] == ']' { // ECMA-262: [] is the empty class, [^] any character
			p.i++
			break
		}
		set, lo, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if set != nil {
			rs = append(rs, set...)
			continue
		}
		if p.i+1 < len(p.src) && p.src[p.i] == '-' && p.src[p.i+1] != ']' {
			p.i++
			set2, hi, err := p.classAtom()
			if err != nil {
				return nil, err
			}
			if set2 != nil {
				return nil, &regexError{"class range with a class escape as its end"}
			}
			if hi < lo {
				return nil, &regexError{fmt.Sprintf("class range out of order at offset %d", p.i)}
			}
			rs = append(rs, RuneRange{lo, hi})
			continue
		}
		rs = append(rs, RuneRange{lo, lo})
	}
	if negate {
		return &Expr{Op: OpClass, Ranges: NegateClass(rs)}, nil
	}
	return &Expr{Op: OpClass, Ranges: NewClass(rs...)}, nil
}

func (p *regexParser) classAtom() ([]RuneRange, rune, error) {
	if p.src[p.i] == '\\' {
		return p.escape(true)
	}
	r := p.src[p.i]
	p.i++
	return nil, r, nil
}
