package kernels

import "math"

// logf returns the natural logarithm of x as glibc's logf does on x86-64
// with FMA (glibc 2.28 and later: ARM's optimized-routines logf, built for
// the ifunc that runs on AVX2+FMA CPUs), bit for bit. llama.cpp computes
// YaRN's correction dimensions and magnitude scale with it; it differs
// from the correctly rounded logarithm for about 0.13% of float32 inputs.
//
// x = 2^k z with z near 1 picked by a 16-entry table of 1/c and log c:
// log x = k ln2 + log c + log(z/c), the last by a degree-4 polynomial in
// r = z/c - 1, in float64 with the FMAs of the compiled code, rounded once.
func logf(x float32) float32 {
	return Logf(x)
}

// Logf is logf for other packages (the model's YaRN attention factor, which
// llama.cpp computes with logf when it creates a context).
func Logf(x float32) float32 {
	ix := math.Float32bits(x)
	if ix == 0x3f800000 { // log 1 = +0
		return 0
	}
	if ix-0x00800000 >= 0x7f800000-0x00800000 { // x < 2^-126, negative, Inf or NaN
		switch {
		case ix<<1 == 0:
			return float32(math.Inf(-1))
		case ix == 0x7f800000:
			return x
		case ix>>31 != 0 || ix<<1 >= 0xff000000:
			return float32(math.NaN())
		}
		ix = math.Float32bits(x*0x1p23) - 23<<23 // subnormal: normalize
	}
	const off = 0x3f330000
	tmp := ix - off
	i := tmp >> (23 - 4) % 16
	k := int32(tmp) >> 23
	iz := ix - tmp&0xff800000
	t := &logfTab[i]
	z := float64(math.Float32frombits(iz))
	r := math.FMA(z, t.invc, -1)
	y0 := math.FMA(float64(k), logfLn2, t.logc)
	r2 := r * r
	y := math.FMA(logfPoly[1], r, logfPoly[2])
	y = math.FMA(logfPoly[0], r2, y)
	y = math.FMA(y, r2, y0+r)
	return float32(y)
}

// logfTab is glibc's __logf_data.tab: for the 16 subintervals of
// [0x3f330000, 2*0x3f330000) in float32 bits, 1/c and log c (read from
// libm.so.6 of glibc 2.36; the values are those of ARM's optimized-routines).
var logfTab = [16]struct{ invc, logc float64 }{
	{0x1.661ec79f8f3bep+0, -0x1.57bf7808caadep-2},
	{0x1.571ed4aaf883dp+0, -0x1.2bef0a7c06ddbp-2},
	{0x1.49539f0f010b0p+0, -0x1.01eae7f513a67p-2},
	{0x1.3c995b0b80385p+0, -0x1.b31d8a68224e9p-3},
	{0x1.30d190c8864a5p+0, -0x1.6574f0ac07758p-3},
	{0x1.25e227b0b8ea0p+0, -0x1.1aa2bc79c8100p-3},
	{0x1.1bb4a4a1a343fp+0, -0x1.a4e76ce8c0e5ep-4},
	{0x1.12358f08ae5bap+0, -0x1.1973c5a611cccp-4},
	{0x1.0953f419900a7p+0, -0x1.252f438e10c1ep-5},
	{0x1.0000000000000p+0, 0},
	{0x1.e608cfd9a47acp-1, 0x1.aa5aa5df25984p-5},
	{0x1.ca4b31f026aa0p-1, 0x1.c5e53aa362eb4p-4},
	{0x1.b2036576afce6p-1, 0x1.526e57720db08p-3},
	{0x1.9c2d163a1aa2dp-1, 0x1.bc2860d224770p-3},
	{0x1.886e6037841edp-1, 0x1.1058bc8a07ee1p-2},
	{0x1.767dcf5534862p-1, 0x1.4043057b6ee09p-2},
}

const logfLn2 = 0x1.62e42fefa39efp-1

// logfPoly are the polynomial's coefficients A[0..2]:
// log(1+r) ~ r + A[2] r^2 + A[1] r^3 + A[0] r^4.
var logfPoly = [3]float64{-0x1.00ea348b88334p-2, 0x1.5575b0be00b6ap-2, -0x1.ffffef20a4123p-2}
