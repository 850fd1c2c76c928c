package sample

import "math"

// expMin is the smallest x whose e**x is a float32 normal; below it the
// exponential counts as 0 (e**-87.3 = 1.2e-38: nothing a softmax can see).
const expMin = -87.33654

// exp32 is e**x in float32 precision, within about 2 ulp of math.Exp.
// x <= 0 is the fast path (softmax after subtracting the maximum); below
// expMin, -Inf included, it returns 0.
func exp32(x float32) float32 {
	if x >= expMin && x <= 0 {
		return expNeg(x)
	}
	if x != x {
		return x
	}
	if x > 0 {
		return float32(math.Exp(float64(x)))
	}
	return 0
}

// expNeg is exp32 for x in [expMin, 0], small enough to inline into the
// full-vocabulary loops (128k calls per token).
//
// Method (Cephes expf): x = n*ln2 + r with |r| <= ln2/2, e**r by a degree-7
// polynomial, times 2**n built in the exponent bits (n in [-126, 0]).
func expNeg(x float32) float32 {
	const round = 12582912 // 1.5 * 2**23: adding and subtracting it rounds to an integer
	fn := (x*1.44269504088896341 + round) - round
	r := x - fn*0.693359375 - fn*-2.12194440e-4 // ln2 in two parts: the first is exact
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	return (p*r*r + r + 1) * math.Float32frombits(uint32(int32(fn)+127)<<23)
}
