package grammar

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonValue is a parsed JSON value that keeps the order of object members
// (property order in a schema matters: it is the order the grammar emits).
type jsonValue struct {
	kind jsonKind
	b    bool
	num  string // number: the text as written
	str  string
	arr  []*jsonValue
	obj  []jsonMember
}

type jsonMember struct {
	key string
	val *jsonValue
}

type jsonKind uint8

const (
	jNull jsonKind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func (k jsonKind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// get returns the member key of an object, or nil.
func (v *jsonValue) get(key string) *jsonValue {
	if v == nil || v.kind != jObject {
		return nil
	}
	for _, m := range v.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// objMembers returns the members of an object (nil for anything else).
func (v *jsonValue) objMembers() []jsonMember {
	if v == nil || v.kind != jObject {
		return nil
	}
	return v.obj
}

// maxJSONDepth bounds the nesting of a parsed document.
const maxJSONDepth = 512

// parseJSON parses one JSON document (RFC 8259). Duplicate object keys are
// an error (a schema with them is ambiguous).
func parseJSON(data []byte) (*jsonValue, error) {
	p := &jsonParser{s: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.errf("unexpected text after the JSON value")
	}
	return v, nil
}

type jsonParser struct {
	s []byte
	i int
}

func (p *jsonParser) errf(format string, args ...any) error {
	return fmt.Errorf("json: offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *jsonParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) lit(word string) bool {
	if len(p.s)-p.i >= len(word) && string(p.s[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) (*jsonValue, error) {
	if depth > maxJSONDepth {
		return nil, p.errf("nested deeper than %d", maxJSONDepth)
	}
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end of input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		v := &jsonValue{kind: jObject}
		p.space()
		if p.lit("}") {
			return v, nil
		}
		for {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, p.errf("expected a member name")
			}
			k, err := p.string()
			if err != nil {
				return nil, err
			}
			if v.get(k) != nil {
				return nil, p.errf("duplicate member %q", k)
			}
			p.space()
			if !p.lit(":") {
				return nil, p.errf("expected ':'")
			}
			p.space()
			m, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.obj = append(v.obj, jsonMember{k, m})
			p.space()
			if p.lit("}") {
				return v, nil
			}
			if !p.lit(",") {
				return nil, p.errf("expected ',' or '}'")
			}
		}
	case c == '[':
		p.i++
		v := &jsonValue{kind: jArray}
		p.space()
		if p.lit("]") {
			return v, nil
		}
		for {
			p.space()
			e, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.arr = append(v.arr, e)
			p.space()
			if p.lit("]") {
				return v, nil
			}
			if !p.lit(",") {
				return nil, p.errf("expected ',' or ']'")
			}
		}
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &jsonValue{kind: jString, str: s}, nil
	case c == 't' && p.lit("true"):
		return &jsonValue{kind: jBool, b: true}, nil
	case c == 'f' && p.lit("false"):
		return &jsonValue{kind: jBool}, nil
	case c == 'n' && p.lit("null"):
		return &jsonValue{kind: jNull}, nil
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		if c == '-' {
			p.i++
		}
		digits := func() int {
			n := 0
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
				n++
			}
			return n
		}
		if p.i < len(p.s) && p.s[p.i] == '0' {
			p.i++
		} else if digits() == 0 {
			return nil, p.errf("bad number")
		}
		if p.lit(".") && digits() == 0 {
			return nil, p.errf("bad number")
		}
		if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
			p.i++
			if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
				p.i++
			}
			if digits() == 0 {
				return nil, p.errf("bad number")
			}
		}
		return &jsonValue{kind: jNumber, num: string(p.s[start:p.i])}, nil
	}
	return nil, p.errf("unexpected %q", p.s[p.i])
}

func (p *jsonParser) string() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.errf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.errf("control character in string")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.errf("unterminated escape")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						if r2, err = p.hex4(); err != nil {
							return "", err
						}
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
						} else {
							p.i = save
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				b.WriteRune(r)
			default:
				return "", p.errf("bad escape \\%c", e)
			}
		default:
			r, n := utf8.DecodeRune(p.s[p.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", p.errf("invalid UTF-8")
			}
			b.Write(p.s[p.i : p.i+n])
			p.i += n
		}
	}
}

func (p *jsonParser) hex4() (rune, error) {
	if len(p.s)-p.i < 4 {
		return 0, p.errf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(p.s[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, p.errf("bad \\u escape")
	}
	p.i += 4
	return rune(v), nil
}

// Canonical JSON text, the one form the schema grammars accept for a value:
// strings with the fewest escapes (appendJSONString), numbers as plain
// decimals (canonicalNumber), no whitespace, members in the given order.

// appendJSONString appends s as a JSON string in canonical form: '"' and
// '\' escaped, \b \f \n \r \t for those controls, \u00xx (lower-case hex)
// for the other controls, everything else as its UTF-8 bytes.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		dst = appendJSONRune(dst, r)
	}
	return append(dst, '"')
}

func appendJSONRune(dst []byte, r rune) []byte {
	switch r {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if r < 0x20 {
		const hex = "0123456789abcdef"
		return append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&15])
	}
	return utf8.AppendRune(dst, r)
}

// maxNumberExponent bounds the exponent of numbers the compiler rewrites as
// plain decimals (1e400 would be 401 digits; 1e1000000 is refused).
const maxNumberExponent = 400

// canonicalNumber rewrites JSON number text as a plain decimal: no exponent,
// no leading zeros, no trailing fraction zeros, "0" for any zero. Equal
// numbers get equal text.
func canonicalNumber(text string) (string, error) {
	if e := strings.IndexAny(text, "eE"); e >= 0 {
		x, err := strconv.Atoi(text[e+1:])
		if err != nil || x > maxNumberExponent || x < -maxNumberExponent {
			return "", fmt.Errorf("number %q: exponent outside ±%d", text, maxNumberExponent)
		}
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return "", fmt.Errorf("bad number %q", text)
	}
	return ratDecimal(r), nil
}

// ratDecimal writes a rational with a finite decimal expansion (any parsed
// JSON number) as a plain decimal.
func ratDecimal(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// The denominator divides a power of ten: find the number of fraction digits.
	den := new(big.Int).Set(r.Denom())
	digits := 0
	ten := big.NewInt(10)
	pow := big.NewInt(1)
	for new(big.Int).Mod(pow, den).Sign() != 0 {
		pow.Mul(pow, ten)
		digits++
	}
	s := r.FloatString(digits)
	return s
}

// canonicalText returns the canonical JSON text of v, with object members
// in v's order (sorted by key when sortKeys is set, for comparing values).
func canonicalText(v *jsonValue, sortKeys bool) (string, error) {
	b, err := appendCanonical(nil, v, sortKeys)
	return string(b), err
}

func appendCanonical(dst []byte, v *jsonValue, sortKeys bool) ([]byte, error) {
	switch v.kind {
	case jNull:
		return append(dst, "null"...), nil
	case jBool:
		if v.b {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case jNumber:
		n, err := canonicalNumber(v.num)
		if err != nil {
			return nil, err
		}
		return append(dst, n...), nil
	case jString:
		return appendJSONString(dst, v.str), nil
	case jArray:
		dst = append(dst, '[')
		for i, e := range v.arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, e, sortKeys); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	members := v.obj
	if sortKeys {
		members = slices.Clone(members)
		slices.SortFunc(members, func(a, b jsonMember) int { return strings.Compare(a.key, b.key) })
	}
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, m.key)
		dst = append(dst, ':')
		var err error
		if dst, err = appendCanonical(dst, m.val, sortKeys); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}
