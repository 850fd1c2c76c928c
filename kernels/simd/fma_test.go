package simd

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fmaExact is a*b+c computed exactly with big.Float and rounded once to
// float32 (nearest even).
func fmaExact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// TestFMA32: one rounding, including the halfway cases where rounding the
// float64 sum again would go the wrong way.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := [][3]float32{
		{1, 1, 0}, {0, 5, -0.0}, {1 + 1.0/(1<<23), 1 - 1.0/(1<<23), -1},
		{float32(math.Ldexp(1, 12)) + 1, float32(math.Ldexp(1, 12)) + 1, float32(math.Ldexp(1, -30))},
		{3, 1.0 / 3, -1}, {math.MaxFloat32, 2, -math.MaxFloat32},
		{0x1p-75, 0x1.000002p-75, 0x1p-149}, {0x1.8p-74, 0x1p-75, -0x1p-148}, {0x1.000002p-70, 0x1.8p-80, 0x1.8p-149},
	}
	for range 100000 { // results near and in float32's subnormal range
		a := float32(rng.NormFloat64()) * 0x1p-70
		b := float32(rng.NormFloat64()) * 0x1p-70
		c := float32(rng.NormFloat64()) * 0x1p-145
		cases = append(cases, [3]float32{a, b, c})
	}
	for range 200000 {
		a := float32(rng.NormFloat64())
		b := float32(rng.NormFloat64())
		c := -a * b
		// halfway-ish: c close to -a*b and perturbed by tiny terms
		c = math.Float32frombits(math.Float32bits(c) + uint32(rng.IntN(5)) - 2)
		cases = append(cases, [3]float32{a, b, c}, [3]float32{a, b, float32(rng.NormFloat64())})
	}
	for _, k := range cases {
		got, want := fma32(k[0], k[1], k[2]), fmaExact(k[0], k[1], k[2])
		if math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", k[0], k[1], k[2], got, want)
		}
	}
}
