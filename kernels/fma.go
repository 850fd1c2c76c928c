package kernels

import "math"

// fmaf returns a*b+c rounded once to float32, as the fused multiply-add
// instructions of llama.cpp's compiled kernels. a*b is exact in float64, so
// s = a*b+c in float64 is one rounding; rounding s again to float32 only
// goes wrong when s lies exactly halfway between two float32 values (or in
// float32's subnormal range) while a*b+c does not: then s is moved one
// float64 ulp towards the exact sum, whose error TwoSum gives (rounding to
// odd), and rounds correctly.
func fmaf(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	u := math.Float64bits(s)
	if u&(1<<29-1) != 1<<28 && u&0x7ff0000000000000 >= 0x3810000000000000 {
		return float32(s)
	}
	// TwoSum: e = (p + c) - s exactly.
	bv := s - p
	e := (p - (s - bv)) + (float64(c) - bv)
	if e != 0 && u&1 == 0 && !math.IsInf(s, 0) {
		if (e > 0) == (s > 0) {
			u++
		} else {
			u--
		}
	}
	return float32(math.Float64frombits(u))
}
