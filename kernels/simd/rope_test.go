package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRotate checks RotateInterleaved and RotateHalves under every kernel
// set against the scalar formulas (fma32, rounded products), bit for bit,
// for widths covering the 16-wide, 8-wide and scalar parts, several heads
// at a stride wider than the rotated part (which must stay untouched), and
// signed zeros.
func TestRotate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{0, 2, 6, 8, 10, 16, 24, 32, 40, 64, 128} {
		for _, heads := range []int{1, 3} {
			stride := d + 2*r.IntN(3)
			x := randF32(r, heads*stride, 4)
			if d == 24 {
				for i := range x {
					if i%2 == 0 {
						x[i] = float32(math.Copysign(0, float64(x[i])))
					}
				}
			}
			cs, csw := make([]float32, d), make([]float32, d)
			c, s, sn := make([]float32, d/2), make([]float32, d/2), make([]float32, d/2)
			for i := 0; i < d/2; i++ {
				si, ci := math.Sincos(r.Float64() * 100)
				c[i], s[i], sn[i] = float32(ci), float32(si), -float32(si)
				cs[2*i], cs[2*i+1] = c[i], s[i]
				csw[2*i], csw[2*i+1] = -s[i], c[i]
			}
			wantI, wantH := append([]float32(nil), x...), append([]float32(nil), x...)
			for h := 0; h < heads; h++ {
				v := wantI[h*stride:]
				for i := 0; i < d/2; i++ {
					x0, x1 := v[2*i], v[2*i+1]
					v[2*i] = fma32(x0, c[i], -float32(x1*s[i]))
					v[2*i+1] = fma32(x0, s[i], float32(x1*c[i]))
				}
				a, b := wantH[h*stride:], wantH[h*stride+d/2:]
				for i := 0; i < d/2; i++ {
					x0, x1 := a[i], b[i]
					a[i] = fma32(x0, c[i], -float32(x1*s[i]))
					b[i] = fma32(x0, s[i], float32(x1*c[i]))
				}
			}
			bothImpls(t, func(t *testing.T, impl string) {
				gotI, gotH := append([]float32(nil), x...), append([]float32(nil), x...)
				RotateInterleaved(gotI, heads, stride, d, cs, csw)
				RotateHalves(gotH, heads, stride, d/2, c, s, sn)
				for i := range x {
					if math.Float32bits(gotI[i]) != math.Float32bits(wantI[i]) {
						t.Fatalf("%s interleaved d=%d heads=%d [%d]: %g, want %g", impl, d, heads, i, gotI[i], wantI[i])
					}
					if math.Float32bits(gotH[i]) != math.Float32bits(wantH[i]) {
						t.Fatalf("%s halves d=%d heads=%d [%d]: %g, want %g", impl, d, heads, i, gotH[i], wantH[i])
					}
				}
			})
		}
	}
}

func TestRotateBadShapesPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"short x":  func() { RotateInterleaved(make([]float32, 15), 2, 8, 8, make([]float32, 8), make([]float32, 8)) },
		"odd d":    func() { RotateInterleaved(make([]float32, 16), 1, 8, 7, make([]float32, 8), make([]float32, 8)) },
		"short cs": func() { RotateInterleaved(make([]float32, 16), 1, 16, 16, make([]float32, 8), make([]float32, 16)) },
		"stride < d": func() {
			RotateHalves(make([]float32, 64), 2, 8, 8, make([]float32, 8), make([]float32, 8), make([]float32, 8))
		},
		"short sn": func() {
			RotateHalves(make([]float32, 16), 1, 16, 8, make([]float32, 8), make([]float32, 8), make([]float32, 4))
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
