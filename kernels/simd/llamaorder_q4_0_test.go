package simd_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"kiln/gguf"
	"kiln/internal/llamaorder"
	"kiln/kernels"
	"kiln/kernels/simd"
	"kiln/quant"
)

// TestQ4_0MatchesLlamaOrder: every Q4_0 kernel flavour, on both
// implementations, reproduces internal/llamaorder's MatMul (llama.cpp's
// verified orders) bit for bit on matrices of quantized random rows:
//
//	Rows%8 == 0   DotQ4_0Q8_0, DotQ4_0Q8_0x4, GemmQ4_0Q8_0 (m = T: the
//	              decode kernel for T = 1, the panel kernels x1..x4 above)
//	Rows%8 != 0   DotQ4_0Q8_0Lanes, DotQ4_0Q8_0Lanesx4
//
// for several batch sizes T, so a row's result does not depend on the
// kernel or the batch (batch invariance).
func TestQ4_0MatchesLlamaOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	const cols = 512
	nb := cols / 32
	for _, rows := range []int{16, 24, 40, 13, 7, 9} {
		wf := make([]float32, rows*cols)
		for i := range wf {
			wf[i] = float32(rng.NormFloat64())
		}
		rb, err := gguf.TypeQ4_0.RowBytes(cols)
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, rows*rb)
		for r := range rows {
			if err := quant.Quantize(gguf.TypeQ4_0, wf[r*cols:(r+1)*cols], data[r*rb:(r+1)*rb]); err != nil {
				t.Fatal(err)
			}
		}
		w := &kernels.Matrix{Type: gguf.TypeQ4_0, Rows: rows, Cols: cols, Data: data}
		for _, T := range []int{1, 2, 3, 4, 5, 9} {
			x := make([]float32, T*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			want := make([]float32, T*rows)
			llamaorder.MatMul(want, w, x, T)
			xq := make([]byte, (T+3)*nb*34) // 3 zero rows: x4 calls past T read them
			for j := range T {
				quant.QuantizeActQ8_0(x[j*cols:(j+1)*cols], xq[j*nb*34:(j+1)*nb*34])
			}
			for _, gen := range []bool{true, false} {
				simd.ForceGeneric(gen)
				name := fmt.Sprintf("%s rows=%d T=%d", simd.Impl(), rows, T)
				check := func(flavour string, got []float32) {
					t.Helper()
					bad := 0
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) && bad < 3 {
							bad++
							t.Errorf("%s %s: out[%d][%d] = %g (%#08x), llama order %g (%#08x)", name, flavour,
								i/rows, i%rows, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
				single := simd.DotQ4_0Q8_0Lanes
				x4 := simd.DotQ4_0Q8_0Lanesx4
				if rows%8 == 0 {
					single, x4 = simd.DotQ4_0Q8_0, simd.DotQ4_0Q8_0x4
				}
				got := make([]float32, T*rows)
				for j := range T {
					for r := range rows {
						got[j*rows+r] = single(cols, data[r*rb:], xq[j*nb*34:])
					}
				}
				check("single-row", got)
				got = make([]float32, T*rows)
				for j := 0; j < T; j += 4 {
					for r := range rows {
						var out [4]float32
						x4(cols, data[r*rb:], xq[j*nb*34:], nb*34, &out)
						for k := 0; k < 4 && j+k < T; k++ {
							got[(j+k)*rows+r] = out[k]
						}
					}
				}
				check("x4", got)
				if rows%8 != 0 {
					continue
				}
				ab := simd.GemmActQ4_0Q8_0Bytes(cols)
				a := make([]byte, T*ab)
				for j := range T {
					simd.GemmActQ4_0Q8_0(cols, xq[j*nb*34:], a[j*ab:])
				}
				got = make([]float32, T*rows)
				scratch := make([]byte, simd.GemmScratchBytes(cols))
				simd.GemmQ4_0Q8_0(cols, data, rb, rows, a, ab, T, got, rows, scratch)
				check("gemm", got)
			}
			simd.ForceGeneric(false)
		}
	}
}
