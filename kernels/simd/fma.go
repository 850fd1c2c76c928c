package simd

import "math"

// fma32 returns a*b+c rounded once to float32, as VFMADD231PS does: the
// float64 product of two float32s is exact, and rounding the float64 sum
// s again to float32 can only go wrong when s lies exactly halfway between
// two float32s (its low 29 bits are 1<<28) or in float32's subnormal range
// (a coarser grid); then s is moved one float64 ulp towards the exact sum,
// whose error TwoSum gives (rounding to odd), and rounds correctly. The generic kernels use it to follow llama.cpp's fused
// multiply-add chains bit for bit on every platform.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	u := math.Float64bits(s)
	if u&(1<<29-1) != 1<<28 && u&0x7ff0000000000000 >= 0x3810000000000000 {
		return float32(s)
	}
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

// FMA32 is fma32 for other packages (kernels' RoPE and exp emulations):
// a*b+c with one rounding to float32, on every platform.
func FMA32(a, b, c float32) float32 { return fma32(a, b, c) }

// hsum8 is llama.cpp's hsum_float_8 over 8 float32 lanes:
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
func hsum8(l *[8]float32) float32 {
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}
