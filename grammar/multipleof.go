package grammar

import (
	"errors"
	"math/big"
)

// multipleOf beyond 1 and 10^-n: a number x (written as a plain decimal)
// is a multiple of r = p/q when N = x·10^d is an integer divisible by
// m = r·10^d, d the fraction digits of r. N's digits are x's integer
// digits then its first d fraction digits (fewer: zeros implied; more:
// they must be zeros), so a deterministic automaton over the text tracks
// N's residue mod m, and is intersected with the automaton of the bounds'
// numbers. Bounded by maxMultipleStates (m times d+3 states).

// maxMultipleStates bounds the residue automaton's states.
const maxMultipleStates = 4000

// multipleDFA returns the automaton of the plain decimals (integers only
// when intOnly) that are multiples of r, or errDFATooLarge.
func multipleDFA(r *big.Rat, intOnly bool) (*dfa, error) {
	d, _ := fractionDigits(r)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil)
	mr := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	if !mr.IsInt() || !mr.Num().IsInt64() {
		return nil, errDFATooLarge
	}
	m := int(mr.Num().Int64())
	if m <= 0 || m*(d+3)+4 > maxMultipleStates {
		return nil, errDFATooLarge
	}
	// pow[k] = 10^k mod m, k ≤ d.
	pow := make([]int, d+1)
	pow[0] = 1 % m
	for k := 1; k <= d; k++ {
		pow[k] = pow[k-1] * 10 % m
	}
	out := &dfa{}
	add := func(accept bool) int {
		out.edges = append(out.edges, nil)
		out.accept = append(out.accept, accept)
		return len(out.edges) - 1
	}
	edge := func(from int, lo, hi rune, to int) {
		out.edges[from] = append(out.edges[from], dfaEdge{lo, hi, to})
	}
	start := add(false)
	minus := add(false)
	// I[r]: integer digits read (no leading zero), residue r of them.
	// Z: the integer part "0". F[f][r]: f ≥ 1 fraction digits read (f ≤ d).
	// F0[r]: just after ".". X[r]: more than d fraction digits (zeros).
	I := make([]int, m)
	for i := range I {
		I[i] = add(i*pow[d]%m == 0)
	}
	zero := add(true)
	var F0, X []int
	var F [][]int
	if !intOnly {
		F0 = make([]int, m)
		X = make([]int, m)
		F = make([][]int, d+1)
		for i := range F0 {
			F0[i] = add(false)
			X[i] = add(i == 0)
		}
		for f := 1; f <= d; f++ {
			F[f] = make([]int, m)
			for i := range F[f] {
				F[f][i] = add(i*pow[d-f]%m == 0)
			}
		}
	}
	for _, s := range []int{start, minus} {
		if s == start {
			edge(s, '-', '-', minus)
		}
		edge(s, '0', '0', zero)
		for c := '1'; c <= '9'; c++ {
			edge(s, c, c, I[int(c-'0')%m])
		}
	}
	digitEdges := func(from int, next func(c int) int) {
		for c := '0'; c <= '9'; c++ {
			edge(from, c, c, next(int(c-'0')))
		}
	}
	for i := range I {
		if !intOnly {
			edge(I[i], '.', '.', F0[i])
		}
		digitEdges(I[i], func(c int) int { return I[(i*10+c)%m] })
	}
	if intOnly {
		sortEdges(out)
		return out, nil
	}
	edge(zero, '.', '.', F0[0])
	for i := range F0 {
		if d == 0 {
			edge(F0[i], '0', '0', X[i])
		} else {
			digitEdges(F0[i], func(c int) int { return F[1][(i*10+c)%m] })
		}
		edge(X[i], '0', '0', X[i])
		for f := 1; f <= d; f++ {
			if f < d {
				digitEdges(F[f][i], func(c int) int { return F[f+1][(i*10+c)%m] })
			} else {
				edge(F[f][i], '0', '0', X[i])
			}
		}
	}
	sortEdges(out)
	return out, nil
}

func sortEdges(d *dfa) {
	for q := range d.edges {
		es := d.edges[q]
		for i := 1; i < len(es); i++ {
			for j := i; j > 0 && es[j].lo < es[j-1].lo; j-- {
				es[j], es[j-1] = es[j-1], es[j]
			}
		}
	}
}

// fractionDigits returns the decimal places of a JSON number's value (r's
// denominator divides 10^d).
func fractionDigits(r *big.Rat) (int, bool) {
	den := new(big.Int).Set(r.Denom())
	d := 0
	ten := big.NewInt(10)
	for new(big.Int).Mod(new(big.Int).Exp(ten, big.NewInt(int64(d)), nil), den).Sign() != 0 {
		d++
		if d > maxNumberExponent {
			return 0, false
		}
	}
	return d, true
}

// multipleOfExpr returns the numbers of base (a number expression of
// plain decimals) that are multiples of r.
func multipleOfExpr(base *Expr, r *big.Rat, intOnly bool, path string) (*Expr, error) {
	too := func() error {
		return unsupported(path, "multipleOf", "a modulus past the automaton bound")
	}
	md, err := multipleDFA(r, intOnly)
	if errors.Is(err, errDFATooLarge) {
		return nil, too()
	} else if err != nil {
		return nil, err
	}
	bd, err := exprDFA(base)
	if errors.Is(err, errDFATooLarge) {
		return nil, too()
	} else if err != nil {
		return nil, err
	}
	both, err := intersect(bd, md)
	if errors.Is(err, errDFATooLarge) {
		return nil, too()
	} else if err != nil {
		return nil, err
	}
	both = both.minimize()
	if both.isEmpty() {
		return Never(), nil
	}
	if len(both.edges) <= maxDFAExprStates {
		if e, err := both.toExprLimit(maxDFAExprNodesSmall); err == nil {
			return e, nil
		}
	}
	// Digits, '-' and '.' are written raw in JSON strings too: the string
	// automaton node spells them as they are.
	return &Expr{Op: OpJSONChars, Auto: both}, nil
}
