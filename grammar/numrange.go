package grammar

import (
	"math/big"
	"strings"
)

// Exact grammars for bounded numbers, over canonical JSON number text:
// integers without leading zeros or "-0"; bounded decimals as -?I(.F)?
// (no exponent; F may have trailing zeros). Bounds are arbitrary precision.

var digit = Class(RuneRange{'0', '9'})

func digits(n int) *Expr { return Repeat(digit, n, n) }

func digitRange(lo, hi byte) *Expr { return Class(RuneRange{rune(lo), rune(hi)}) }

// intRangeExpr returns the canonical integers in [lo, hi] (nil: unbounded).
func intRangeExpr(lo, hi *big.Int) *Expr {
	var alts []*Expr
	minusOne := big.NewInt(-1)
	zero := new(big.Int)
	if lo == nil || lo.Sign() < 0 {
		nhi := minusOne
		if hi != nil && hi.Cmp(minusOne) < 0 {
			nhi = hi
		}
		if lo == nil || lo.Cmp(nhi) <= 0 {
			a := new(big.Int).Neg(nhi)
			var b *big.Int
			if lo != nil {
				b = new(big.Int).Neg(lo)
			}
			alts = append(alts, Seq(Lit("-"), natRange(a, b)))
		}
	}
	if hi == nil || hi.Sign() >= 0 {
		nlo := zero
		if lo != nil && lo.Sign() > 0 {
			nlo = lo
		}
		if hi == nil || nlo.Cmp(hi) <= 0 {
			alts = append(alts, natRange(nlo, hi))
		}
	}
	if len(alts) == 0 {
		return Never()
	}
	return Alt(alts...)
}

// natRange returns the decimal naturals in [a, b] (a ≥ 0; b nil: unbounded),
// without leading zeros.
func natRange(a, b *big.Int) *Expr {
	as := a.String()
	if b == nil {
		return Alt(geqSameLen(as), Seq(digitRange('1', '9'), Repeat(digit, len(as), -1)))
	}
	if a.Cmp(b) > 0 {
		return Never()
	}
	bs := b.String()
	if len(as) == len(bs) {
		return betweenSameLen(as, bs)
	}
	alts := []*Expr{geqSameLen(as)}
	for l := len(as) + 1; l < len(bs); l++ {
		alts = append(alts, Seq(digitRange('1', '9'), digits(l-1)))
	}
	alts = append(alts, betweenSameLen("1"+strings.Repeat("0", len(bs)-1), bs))
	return Alt(alts...)
}

// geqSameLen: digit strings of len(s) that are ≥ s.
func geqSameLen(s string) *Expr {
	if s == "" {
		return Lit("")
	}
	alts := []*Expr{Seq(Lit(s[:1]), geqSameLen(s[1:]))}
	if s[0] < '9' {
		alts = append(alts, Seq(digitRange(s[0]+1, '9'), digits(len(s)-1)))
	}
	return Alt(alts...)
}

// leqSameLen: digit strings of len(s) that are ≤ s.
func leqSameLen(s string) *Expr {
	if s == "" {
		return Lit("")
	}
	alts := []*Expr{Seq(Lit(s[:1]), leqSameLen(s[1:]))}
	if s[0] > '0' {
		alts = append(alts, Seq(digitRange('0', s[0]-1), digits(len(s)-1)))
	}
	return Alt(alts...)
}

// betweenSameLen: digit strings x of the common length with a ≤ x ≤ b.
func betweenSameLen(a, b string) *Expr {
	if a == "" {
		return Lit("")
	}
	if a[0] == b[0] {
		return Seq(Lit(a[:1]), betweenSameLen(a[1:], b[1:]))
	}
	alts := []*Expr{Seq(Lit(a[:1]), geqSameLen(a[1:]))}
	if a[0]+1 <= b[0]-1 {
		alts = append(alts, Seq(digitRange(a[0]+1, b[0]-1), digits(len(a)-1)))
	}
	alts = append(alts, Seq(Lit(b[:1]), leqSameLen(b[1:])))
	return Alt(alts...)
}

// bound is one end of a range: a value, and whether the end is excluded.
type bound struct {
	v    *big.Rat
	excl bool
}

// numberRangeExpr returns the bounded decimals (no exponent) x with lo ≤ x
// ≤ hi (each end possibly excluded or absent).
func numberRangeExpr(lo, hi *bound) *Expr {
	var alts []*Expr
	zero := new(big.Rat)
	// Negative x = -y with y > 0.
	if lo == nil || lo.v.Sign() < 0 {
		ylo := &bound{v: zero, excl: true}
		if hi != nil && hi.v.Sign() < 0 {
			ylo = &bound{v: new(big.Rat).Neg(hi.v), excl: hi.excl}
		}
		var yhi *bound
		if lo != nil {
			yhi = &bound{v: new(big.Rat).Neg(lo.v), excl: lo.excl}
		}
		if e := posRange(ylo, yhi); !e.IsNever() {
			alts = append(alts, Seq(Lit("-"), e))
		}
	}
	// x ≥ 0.
	if hi == nil || hi.v.Sign() > 0 || hi.v.Sign() == 0 && !hi.excl {
		xlo := &bound{v: zero}
		if lo != nil && (lo.v.Sign() > 0 || lo.v.Sign() == 0 && lo.excl) {
			xlo = lo
		}
		if e := posRange(xlo, hi); !e.IsNever() {
			alts = append(alts, e)
		}
	}
	if len(alts) == 0 {
		return Never()
	}
	return Alt(alts...)
}

// splitDecimal returns the integer part (floor) and the fraction digits
// (no trailing zeros) of a non-negative rational with a finite expansion.
func splitDecimal(r *big.Rat) (*big.Int, string) {
	s := ratDecimal(r)
	ip, fp, _ := strings.Cut(s, ".")
	i, _ := new(big.Int).SetString(ip, 10)
	return i, strings.TrimRight(fp, "0")
}

// posRange returns numbers I(.F)? (I a canonical natural) with value in
// [lo, hi] (lo required and ≥ 0; hi nil: unbounded).
func posRange(lo, hi *bound) *Expr {
	if hi != nil {
		c := lo.v.Cmp(hi.v)
		if c > 0 || c == 0 && (lo.excl || hi.excl) {
			return Never()
		}
	}
	dl, el := splitDecimal(lo.v)
	one := big.NewInt(1)
	var alts []*Expr
	if hi == nil {
		alts = append(alts,
			Seq(natRange(new(big.Int).Add(dl, one), nil), fracPart(&fracBound{}, &fracBound{})),
			Seq(Lit(dl.String()), fracPart(&fracBound{set: true, digits: el, excl: lo.excl}, &fracBound{})))
		return Alt(alts...)
	}
	dh, eh := splitDecimal(hi.v)
	flo := &fracBound{set: true, digits: el, excl: lo.excl}
	fhi := &fracBound{set: true, digits: eh, excl: hi.excl}
	if dl.Cmp(dh) == 0 {
		return Seq(Lit(dl.String()), fracPart(flo, fhi))
	}
	if mid := new(big.Int).Add(dl, one); mid.Cmp(new(big.Int).Sub(dh, one)) <= 0 {
		alts = append(alts, Seq(natRange(mid, new(big.Int).Sub(dh, one)), fracPart(&fracBound{}, &fracBound{})))
	}
	alts = append(alts,
		Seq(Lit(dl.String()), fracPart(flo, &fracBound{})),
		Seq(Lit(dh.String()), fracPart(&fracBound{}, fhi)))
	return Alt(alts...)
}

// fracBound bounds the fraction value 0.F by 0.digits (digits has no
// trailing zeros); an unset bound is 0 inclusive (low) or 1 exclusive (high).
type fracBound struct {
	set    bool
	digits string
	excl   bool
}

// fracPart returns the optional fraction "." F whose value 0.F satisfies
// both bounds, with no fraction counting as 0.
func fracPart(lo, hi *fracBound) *Expr {
	var alts []*Expr
	if fracEndOK(lo, hi, 0, true, true) {
		alts = append(alts, Lit(""))
	}
	if e := fracDigits(lo, hi, 0, lo.set, hi.set, false); !e.IsNever() {
		alts = append(alts, Seq(Lit("."), e))
	}
	if len(alts) == 0 {
		return Never()
	}
	return Alt(alts...)
}

// fracEndOK: may F end at position i, given it equals lo's digits so far
// (tl) and hi's (th)?
func fracEndOK(lo, hi *fracBound, i int, tl, th bool) bool {
	if tl && lo.set {
		if i < len(lo.digits) {
			return false // F < lo
		}
		if lo.excl {
			return false // F = lo
		}
	}
	if th && hi.set && i >= len(hi.digits) && hi.excl {
		return false // F = hi
	}
	return true
}

func digitAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return '0'
}

// fracDigits returns digit strings for F[i:] given the prefix F[:i] equals
// lo's digits (tl) and hi's (th); allowEnd says whether F may end at i.
func fracDigits(lo, hi *fracBound, i int, tl, th, allowEnd bool) *Expr {
	tl = tl && lo.set
	th = th && hi.set
	anyTail := Star(digit)
	switch {
	case !tl && !th:
		if allowEnd {
			return anyTail
		}
		return Plus(digit)
	case tl && !th && i >= len(lo.digits):
		// Equal to lo so far, lo exhausted: a later non-zero digit exceeds it.
		strict := Seq(Star(Lit("0")), digitRange('1', '9'), anyTail)
		if !lo.excl {
			if allowEnd {
				return anyTail
			}
			return Plus(digit)
		}
		return strict
	case th && !tl && i >= len(hi.digits):
		// Equal to hi so far, hi exhausted: only zeros keep F ≤ hi, and they keep it equal.
		if hi.excl {
			return Never()
		}
		if allowEnd {
			return Star(Lit("0"))
		}
		return Plus(Lit("0"))
	case tl && th && i >= len(lo.digits) && i >= len(hi.digits):
		if lo.excl || hi.excl {
			return Never()
		}
		if allowEnd {
			return Star(Lit("0"))
		}
		return Plus(Lit("0"))
	}
	var alts []*Expr
	if allowEnd && fracEndOK(lo, hi, i, tl, th) {
		alts = append(alts, Lit(""))
	}
	ld, hd := byte('0'), byte('9')
	if tl {
		ld = digitAt(lo.digits, i)
	}
	if th {
		hd = digitAt(hi.digits, i)
	}
	if ld > hd {
		return Alt(alts...)
	}
	// d == ld keeps tl; d == hd keeps th; digits strictly between are free.
	if ld == hd {
		alts = append(alts, Seq(Lit(string(ld)), fracDigits(lo, hi, i+1, tl, th, true)))
	} else {
		alts = append(alts, Seq(Lit(string(ld)), fracDigits(lo, hi, i+1, tl, false, true)))
		if ld+1 <= hd-1 {
			alts = append(alts, Seq(digitRange(ld+1, hd-1), anyTail))
		}
		alts = append(alts, Seq(Lit(string(hd)), fracDigits(lo, hi, i+1, false, th, true)))
	}
	if len(alts) == 0 {
		return Never()
	}
	return Alt(alts...)
}
