package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmQ8_0PackedWMatchesSingleRow checks GemmQ8_0PackedW (activation
// rows in GemmActQ8_0Q8_0W form) against the generic single-row dot of the
// raw rows, bit for bit, under every kernel set: every input mode (-128
// weight quants, extreme scales), block counts around the 16-block
// chunks, m = 1..24 (the 8-row int16 kernel with 0..7 rows left for the
// usual kernels), output strides wider than the rows.
func TestGemmQ8_0PackedWMatchesSingleRow(t *testing.T) {
	r := rand.New(rand.NewPCG(261, 262))
	c := gemmCase{w: "Q8_0", x: "Q8_0", act: GemmActQ8_0Q8_0W, actBytes: GemmActQ8_0Q8_0WBytes}
	for _, mode := range modes {
		for _, nb := range []int{1, 3, 16, 17, 40} {
			for _, sh := range [][2]int{{1, 8}, {2, 9}, {1, 13}, {3, 16}, {1, 17}, {2, 23}, {1, 24}, {1, 7}, {2, 1}} {
				rows, m := sh[0]*8, sh[1]
				w, wStride, x, a, aStride := gemmInputs(r, c, nb, rows, m, mode)
				n := nb * qk
				panels := make([]byte, PackedQ8_0Bytes(n, rows))
				PackQ8_0(n, w, wStride, rows, panels)
				outStride := rows + 3
				bothImpls(t, func(t *testing.T, impl string) {
					out := make([]float32, m*outStride)
					for i := range out {
						out[i] = 12345 // the gaps must stay untouched
					}
					GemmQ8_0PackedW(n, panels, rows, a, aStride, m, out, outStride, make([]byte, GemmScratchBytes(n)))
					for j := range m {
						for i := range outStride {
							got := out[j*outStride+i]
							if i >= rows {
								if got != 12345 {
									t.Fatalf("%s %s nb=%d rows=%d m=%d: wrote out[%d][%d] beyond the rows", impl, mode, nb, rows, m, j, i)
								}
								continue
							}
							want := dotQ8_0Q8_0Generic(nb, w[i*wStride:], x[j])
							if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
								t.Fatalf("%s %s nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), single-row dot %g (%#08x)",
									impl, mode, nb, rows, m, j, i, got, math.Float32bits(got), want, math.Float32bits(want))
							}
						}
					}
				})
			}
		}
	}
}

// TestGemmActQ8_0WForm pins GemmActQ8_0Q8_0W's form byte by byte under
// every kernel set, for every quant byte: the GemmActQ8_0Q8_0 row as it
// is, then per block the even and odd quants of each quad as int16 and d.
func TestGemmActQ8_0WForm(t *testing.T) {
	const nb = 9
	x := make([]byte, nb*bytesQ8_0)
	for i := range x {
		x[i] = byte(i*37 + 11)
	}
	for b := range nb {
		x[b*bytesQ8_0], x[b*bytesQ8_0+1] = 0x00, 0x3c+byte(b) // d = 1.0, 1.0625...
	}
	want := make([]byte, GemmActQ8_0Q8_0Bytes(nb*qk))
	ForceGeneric(true)
	GemmActQ8_0Q8_0(nb*qk, x, want)
	ForceGeneric(false)
	bothImpls(t, func(t *testing.T, impl string) {
		dst := make([]byte, GemmActQ8_0Q8_0WBytes(nb*qk)+5)
		GemmActQ8_0Q8_0W(nb*qk, x, dst)
		if len(dst)-5 != nb*136 {
			t.Fatalf("%s: %d bytes for %d blocks, want 136 per block", impl, len(dst)-5, nb)
		}
		for i, v := range want {
			if dst[i] != v {
				t.Fatalf("%s: byte %d of the GemmActQ8_0Q8_0 part is %#x, want %#x", impl, i, dst[i], v)
			}
		}
		for b := range nb {
			q := x[b*bytesQ8_0+2 : (b+1)*bytesQ8_0]
			blk := dst[nb*68+b*68:]
			for j := range 8 {
				for k := range 2 {
					e := int16(uint16(blk[4*j+2*k]) | uint16(blk[4*j+2*k+1])<<8)
					o := int16(uint16(blk[32+4*j+2*k]) | uint16(blk[32+4*j+2*k+1])<<8)
					if e != int16(int8(q[4*j+2*k])) || o != int16(int8(q[4*j+2*k+1])) {
						t.Fatalf("%s block %d quad %d pair %d: E %d O %d, want %d %d", impl, b, j, k, e, o, int8(q[4*j+2*k]), int8(q[4*j+2*k+1]))
					}
				}
			}
			if d := getF32(blk[64:]); d != f16At(x[b*bytesQ8_0:], 0) {
				t.Fatalf("%s block %d: d %g", impl, b, d)
			}
		}
		for _, v := range dst[nb*136:] {
			if v != 0 {
				t.Fatalf("%s: wrote past the row", impl)
			}
		}
	})
}

// BenchmarkGemmQ8_0PackedW times GemmQ8_0PackedW beside GemmQ8_0Packed
// (the same panels and activation rows; the W section is ignored by the
// latter) under every kernel set: 16 decode streams are m = 16.
func BenchmarkGemmQ8_0PackedW(b *testing.B) {
	r := rand.New(rand.NewPCG(263, 264))
	c := gemmCase{w: "Q8_0", x: "Q8_0", act: GemmActQ8_0Q8_0W, actBytes: GemmActQ8_0Q8_0WBytes}
	for _, n := range []int{2048, 5632} {
		for _, m := range []int{8, 16, 64} {
			nb, rows := n/qk, 64
			w, wStride, _, a, aStride := gemmInputs(r, c, nb, rows, m, "random")
			panels := make([]byte, PackedQ8_0Bytes(n, rows))
			PackQ8_0(n, w, wStride, rows, panels)
			out, scratch := make([]float32, m*rows), make([]byte, GemmScratchBytes(n))
			for _, f := range []struct {
				name string
				gemm func(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte)
			}{{"W", GemmQ8_0PackedW}, {"packed", GemmQ8_0Packed}} {
				b.Run(fmt.Sprintf("%s/n=%d/m=%d", f.name, n, m), func(b *testing.B) {
					benchImpls(b, func(b *testing.B) {
						b.SetBytes(int64(m * rows * wStride))
						for b.Loop() {
							f.gemm(n, panels, rows, a, aStride, m, out, rows, scratch)
						}
					})
				})
			}
		}
	}
}
