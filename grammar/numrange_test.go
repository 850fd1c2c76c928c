package grammar

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

func exprMatcher(t *testing.T, e *Expr) *Matcher {
	t.Helper()
	p, err := Compile(&Grammar{Rules: []Rule{{Name: "root", Body: e}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Empty() {
		return nil
	}
	m, err := NewMatcher(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIntRangeExhaustive(t *testing.T) {
	bounds := []*big.Int{nil, big.NewInt(-120), big.NewInt(-7), big.NewInt(-1), big.NewInt(0), big.NewInt(1), big.NewInt(9), big.NewInt(10), big.NewInt(99), big.NewInt(100), big.NewInt(205)}
	for _, lo := range bounds {
		for _, hi := range bounds {
			m := exprMatcher(t, intRangeExpr(lo, hi))
			for v := -300; v <= 300; v++ {
				want := (lo == nil || lo.Int64() <= int64(v)) && (hi == nil || int64(v) <= hi.Int64())
				got := m != nil && matches(m, fmt.Sprint(v))
				if got != want {
					t.Fatalf("[%v, %v] on %d: got %v", lo, hi, v, got)
				}
			}
			if m != nil && (matches(m, "-0") || matches(m, "007") || matches(m, "")) {
				t.Fatalf("[%v, %v] accepts a non-canonical integer", lo, hi)
			}
		}
	}
}

func TestNumberRangeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := []string{"-2.5", "-1", "-0.25", "0", "0.1", "0.5", "1", "1.05", "3", "12.75"}
	randNum := func() string {
		s := ""
		if rng.IntN(2) == 0 {
			s = "-"
		}
		s += fmt.Sprint(rng.IntN(15))
		if rng.IntN(2) == 0 {
			s += "."
			for range 1 + rng.IntN(3) {
				s += fmt.Sprint(rng.IntN(10))
			}
		}
		return s
	}
	for range 200 {
		var lo, hi *bound
		if rng.IntN(4) > 0 {
			v, _ := new(big.Rat).SetString(vals[rng.IntN(len(vals))])
			lo = &bound{v: v, excl: rng.IntN(2) == 0}
		}
		if rng.IntN(4) > 0 {
			v, _ := new(big.Rat).SetString(vals[rng.IntN(len(vals))])
			hi = &bound{v: v, excl: rng.IntN(2) == 0}
		}
		m := exprMatcher(t, numberRangeExpr(lo, hi))
		for range 200 {
			s := randNum()
			x, _ := new(big.Rat).SetString(s)
			want := s != "-0" && !(len(s) > 1 && s[0] == '-' && x.Sign() == 0)
			if lo != nil {
				c := x.Cmp(lo.v)
				want = want && (c > 0 || c == 0 && !lo.excl)
			}
			if hi != nil {
				c := x.Cmp(hi.v)
				want = want && (c < 0 || c == 0 && !hi.excl)
			}
			got := m != nil && matches(m, s)
			if got != want {
				t.Fatalf("lo %v hi %v on %s: got %v want %v", lo, hi, s, got, want)
			}
		}
	}
}
