package chat

import (
	"strconv"
	"strings"
	"time"
)

// strftime formats t like Python's datetime.strftime on Linux (glibc),
// for the directives chat templates use (Llama 3.2: "%d %b %Y"). Unknown
// directives are copied through unchanged, as glibc does. Names are the
// C locale's (English).
//
//	%a %A  Mon Monday      %b %B %h  Jan January   %d %e  05 " 5"   %-d  5
//	%m %-m 01 1            %y %Y  24 2024          %H %I %M %S  15 03 04 05
//	%p     AM/PM           %j     day of year 001  %-H %-I %-M %-S %-j  no padding
//	%Z %z  empty (datetime.now() is naive)        %%     a literal %
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		num := func(n, width int) {
			s := strconv.Itoa(n)
			if pad {
				for len(s) < width {
					s = "0" + s
				}
			}
			b.WriteString(s)
		}
		switch format[i] {
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'd':
			num(t.Day(), 2)
		case 'e':
			if pad && t.Day() < 10 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(t.Day()))
		case 'm':
			num(int(t.Month()), 2)
		case 'y':
			num(t.Year()%100, 2)
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'j':
			num(t.YearDay(), 3)
		case 'Z', 'z':
			// datetime.now() is naive: no zone, so both print nothing.
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if !pad {
				b.WriteByte('-')
			}
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
