package simd

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

var x4Dots = []struct {
	w, x   string
	x4     func(n int, w, x []byte, xStride int, out *[4]float32)
	single func(n int, w, x []byte) float32
	fn     string // the name in panics, when not Dot<w><x>x4
}{
	{"Q8_0", "Q8_0", DotQ8_0Q8_0x4, DotQ8_0Q8_0, ""},
	{"Q4_0", "Q8_0", DotQ4_0Q8_0x4, DotQ4_0Q8_0, ""},
	{"Q4_K", "Q8_K", DotQ4_KQ8_Kx4, DotQ4_KQ8_K, ""},
	{"Q2_K", "Q8_K", DotQ2_KQ8_Kx4, DotQ2_KQ8_K, ""},
	{"Q3_K", "Q8_K", DotQ3_KQ8_Kx4, DotQ3_KQ8_K, ""},
	{"Q5_K", "Q8_K", DotQ5_KQ8_Kx4, DotQ5_KQ8_K, ""},
	{"Q6_K", "Q8_K", DotQ6_KQ8_Kx4, DotQ6_KQ8_K, ""},
	{"Q4_K", "Q8_K", DotQ4_KQ8_KGemvx4, DotQ4_KQ8_KGemv, "DotQ4_KQ8_KGemvx4"},
}

// TestX4MatchesSingleRow checks that every lane of each x4 kernel has the
// bits of the single-row dot, for both implementations, with activation
// rows packed back to back, padded apart, and all four the same row.
func TestX4MatchesSingleRow(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, q := range x4Dots {
		fw, fx := formats[q.w], formats[q.x]
		for _, mode := range modes {
			for _, nb := range blockCounts(fw.block) {
				rowBytes := nb * fx.bytes
				for _, stride := range []int{rowBytes, rowBytes + 7, 0} {
					w := genRow(r, fw, nb, mode)
					x := make([]byte, 3*stride+rowBytes)
					for k := range 4 {
						copy(x[k*stride:], genRow(r, fx, nb, mode))
					}
					bothImpls(t, func(t *testing.T, impl string) {
						var out [4]float32
						q.x4(nb*fw.block, w, x, stride, &out)
						for k := range 4 {
							want := q.single(nb*fw.block, w, x[k*stride:])
							if math.Float32bits(out[k]) != math.Float32bits(want) {
								t.Errorf("%s x4 %s %s nb=%d stride=%d row %d: %g, single-row %g", impl, q.w, mode, nb, stride, k, out[k], want)
							}
						}
					})
				}
			}
		}
	}
}

func TestX4BadShapesPanic(t *testing.T) {
	for _, q := range x4Dots {
		fw, fx := formats[q.w], formats[q.x]
		w, x := make([]byte, fw.bytes), make([]byte, 4*fx.bytes)
		var out [4]float32
		for _, c := range []struct {
			name   string
			n      int
			x      []byte
			stride int
			out    *[4]float32
		}{
			{"short activations", fw.block, x[:4*fx.bytes-1], fx.bytes, &out},
			{"negative stride", fw.block, x, -1, &out},
			{"huge stride", fw.block, x, 1 << 62, &out},
			{"nil out", fw.block, x, fx.bytes, nil},
			{"bad n", fw.block - 1, x, fx.bytes, &out},
		} {
			msg := panicMessage(func() { q.x4(c.n, w, c.x, c.stride, c.out) })
			prefix := "simd: Dot" + q.w + q.x + "x4: "
			if q.fn != "" {
				prefix = "simd: " + q.fn + ": "
			}
			if !strings.HasPrefix(msg, prefix) {
				t.Errorf("%s x4 %s: panic %q", q.w, c.name, msg)
			}
		}
	}
}
