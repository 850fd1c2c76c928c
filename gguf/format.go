package gguf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// displayElems is how many array elements Format prints before eliding the
// rest: enough to recognise a vocabulary, short enough for one line.
const displayElems = 8

// Format prints v for humans (kiln inspect): scalars as Go literals (strings
// quoted), arrays as "[]elem(len)[e0 e1 … +N more]". The verbs %v and %s
// give this form; %+v prints every array element.
func (v Value) Format(s fmt.State, verb rune) {
	limit := displayElems
	if s.Flag('+') {
		limit = math.MaxInt
	}
	var b strings.Builder
	v.appendText(&b, limit)
	s.Write([]byte(b.String()))
}

// Text returns v formatted as by %v: long arrays are truncated.
func (v Value) Text() string { return fmt.Sprintf("%v", v) }

func (v Value) appendText(b *strings.Builder, limit int) {
	switch {
	case v.typ == TypeString:
		b.WriteString(strconv.Quote(v.str))
	case v.typ == TypeBool:
		b.WriteString(strconv.FormatBool(v.num != 0))
	case v.typ == TypeFloat32:
		b.WriteString(strconv.FormatFloat(float64(math.Float32frombits(uint32(v.num))), 'g', -1, 32))
	case v.typ == TypeFloat64:
		b.WriteString(strconv.FormatFloat(math.Float64frombits(v.num), 'g', -1, 64))
	case v.typ.isSigned():
		b.WriteString(strconv.FormatInt(int64(v.num), 10))
	case v.typ.isInt():
		b.WriteString(strconv.FormatUint(v.num, 10))
	case v.typ == TypeArray && v.arr != nil:
		a := v.arr
		fmt.Fprintf(b, "[]%s(%d)[", a.elem, a.n)
		if a.err != nil {
			fmt.Fprintf(b, "invalid: %v]", a.err)
			return
		}
		for i := 0; i < a.n; i++ {
			if i == limit {
				fmt.Fprintf(b, " … +%d more", a.n-limit)
				break
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			a.elemValue(i).appendText(b, limit)
		}
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "%%!(%s)", v.typ)
	}
}
