package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmQ8_0ArbitraryBytes feeds Q8_0 rows of random bytes (any f16
// scales: NaN, ±Inf, subnormals; any weight quants, -128 included;
// activation quants in [-127, 127], GemmQ8_0Q8_0's precondition, by
// clampActQ8_0) to the GEMM on both implementations, for every batch size 1..6 (decode kernel, row
// groups of 1, 2 and 4) and panel tails, and requires the generic
// single-row dot's bits (NaN only needs to be NaN). Up to 40 blocks:
// chunk tails of the row groups.
func TestGemmQ8_0ArbitraryBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for rep := range 40 {
		nb, rows, m := 1+r.IntN(40), 1+r.IntN(20), 1+r.IntN(6)
		n := nb * qk
		rb := nb * bytesQ8_0
		w := make([]byte, rows*rb)
		x := make([]byte, m*rb)
		for _, b := range [][]byte{w, x} {
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			if rep%2 == 1 { // finite scales: most long rows would be NaN
				for i := 0; i < len(b); i += bytesQ8_0 {
					if b[i+1]&0x7c == 0x7c { // f16 exponent all ones
						b[i+1] &^= 0x40
					}
				}
			}
		}
		clampActQ8_0(x)
		ab := GemmActQ8_0Q8_0Bytes(n)
		a := make([]byte, m*ab)
		for j := range m {
			GemmActQ8_0Q8_0(n, x[j*rb:], a[j*ab:])
		}
		bothImpls(t, func(t *testing.T, impl string) {
			out := make([]float32, m*rows)
			GemmQ8_0Q8_0(n, w, rb, rows, a, ab, m, out, rows, make([]byte, GemmScratchBytes(n)))
			for j := range m {
				for i := range rows {
					want := dotQ8_0Q8_0Generic(nb, w[i*rb:], x[j*rb:])
					got := out[j*rows+i]
					if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
						t.Fatalf("%s rep %d nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), generic %g (%#08x)",
							impl, rep, nb, rows, m, j, i, got, math.Float32bits(got), want, math.Float32bits(want))
					}
				}
			}
		})
	}
}

// clampActQ8_0 turns every -128 quant of the Q8_0 blocks in x into -127:
// GemmQ8_0Q8_0's precondition on activations (its kernels flip x's sign
// with VPSIGNB). Kiln's QuantizeActQ8_0 never writes -128.
func clampActQ8_0(x []byte) {
	for b := 0; b+bytesQ8_0 <= len(x); b += bytesQ8_0 {
		for i := b + 2; i < b+bytesQ8_0; i++ {
			if x[i] == 0x80 {
				x[i] = 0x81
			}
		}
	}
}

// TestGemmActQ8_0Form pins GemmActQ8_0Q8_0's form byte by byte under every
// kernel set: per block the quants and d as float32, then per block the
// quants XOR 0x80, for every byte value (-128 included).
func TestGemmActQ8_0Form(t *testing.T) {
	const nb = 9
	x := make([]byte, nb*bytesQ8_0)
	for i := range x {
		x[i] = byte(i*37 + 11)
	}
	for b := range nb {
		x[b*bytesQ8_0], x[b*bytesQ8_0+1] = 0x00, 0x3c // d = 1.0 (fp16)
	}
	bothImpls(t, func(t *testing.T, impl string) {
		dst := make([]byte, GemmActQ8_0Q8_0Bytes(nb*qk)+5)
		GemmActQ8_0Q8_0(nb*qk, x, dst)
		if len(dst)-5 != nb*68 {
			t.Fatalf("%s: %d bytes for %d blocks, want 68 per block", impl, len(dst)-5, nb)
		}
		for b := range nb {
			q := x[b*bytesQ8_0+2 : (b+1)*bytesQ8_0]
			blk := dst[b*36:]
			for i := range 32 {
				if blk[i] != q[i] || dst[nb*36+32*b+i] != q[i]^0x80 {
					t.Fatalf("%s block %d quant %d: %#x and %#x, want %#x and %#x", impl, b, i, blk[i], dst[nb*36+32*b+i], q[i], q[i]^0x80)
				}
			}
			if getF32(blk[32:]) != 1 {
				t.Fatalf("%s block %d: d %g, want 1", impl, b, getF32(blk[32:]))
			}
		}
		for _, v := range dst[nb*68:] {
			if v != 0 {
				t.Fatalf("%s: wrote past the row", impl)
			}
		}
	})
}
