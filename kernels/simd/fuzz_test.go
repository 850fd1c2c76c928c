package simd

import (
	"math"
	"testing"
)

// FuzzQuantDots feeds arbitrary bytes (any scales, including NaN, Inf and
// subnormals; any quants; inconsistent bsums) to every quantized dot and
// requires every kernel set's path (generic, avx2, avxvnni, avx512vnni as
// the CPU has them) and the x4 kernels to agree bit for bit (NaN only
// needs to be NaN: payloads may differ).
//
//	data[0] picks the kernel, data[1] the block count (1..8); the rest fills
//	the weight row, then the activation rows, cyclically.
func FuzzQuantDots(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 3})
	f.Add([]byte{5, 1, 0xff, 0x7b, 0x80})
	f.Add([]byte{7, 2, 0x00, 0x7c, 0x01, 0xfe})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		q := quantDots[int(data[0])%len(quantDots)]
		fw, fx := formats[q.w], formats[q.x]
		nb := 1 + int(data[1])%8
		src := data[2:]
		fillFrom := func(n int, off int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = src[(off+i)%len(src)] ^ byte(i>>8)
			}
			return b
		}
		w := fillFrom(nb*fw.bytes, 0)
		x := fillFrom(4*nb*fx.bytes, 7)
		n := nb * fw.block
		same := func(a, b float32) bool {
			return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
		}
		ForceGeneric(true)
		want := q.public(n, w, x)
		for _, set := range Impls() { // every kernel set's single-row dot
			if _, err := SetImpl(set); err != nil {
				t.Fatal(err)
			}
			if got := q.public(n, w, x); !same(got, want) {
				ForceGeneric(false)
				t.Fatalf("%s nb=%d: %s %g (%#08x), generic %g (%#08x)", q.w, nb, set, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
		ForceGeneric(false)
		for _, q4 := range x4Dots {
			if q4.w != q.w {
				continue
			}
			for _, gen := range []bool{true, false} {
				ForceGeneric(gen)
				var out [4]float32
				q4.x4(n, w, x, nb*fx.bytes, &out)
				for k := range 4 {
					ForceGeneric(true)
					want := q4.single(n, w, x[k*nb*fx.bytes:]) // its own order (the gemv's for DotQ4_KQ8_KGemvx4)
					ForceGeneric(gen)
					if !same(out[k], want) {
						t.Fatalf("%s x4 nb=%d row %d (%s): %g, generic single %g", q.w, nb, k, Impl(), out[k], want)
					}
				}
			}
			ForceGeneric(false)
		}
	})
}
