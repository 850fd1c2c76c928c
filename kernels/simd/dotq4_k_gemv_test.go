package simd

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ4_KGemvMatchesReference bounds DotQ4_KQ8_KGemv (the order of
// ggml_gemv_q4_K_8x8_q8_K; its bits are checked end to end by the MoE
// Q4_K oracle goldens) against the float64 dequantize-and-dot reference,
// and checks that a one-block row is the two rounded products' difference.
func TestQ4_KGemvMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	fw, fx := formats["Q4_K"], formats["Q8_K"]
	for _, mode := range modes {
		for _, nb := range blockCounts(qkK) {
			for rep := range 3 {
				w, x := genRow(r, fw, nb, mode), genRow(r, fx, nb, mode)
				got := DotQ4_KQ8_KGemv(nb*qkK, w, x)
				want, abs := refQuant["Q4_K"](nb, w, x)
				if !within(got, want, abs) {
					t.Errorf("Q4_K gemv %s nb=%d rep=%d: %g, reference %g (abs sum %g)", mode, nb, rep, got, want, abs)
				}
			}
		}
	}
	// One block: acc = fma(iacc, d*d8, 0) is float32(iacc)*(d*d8) rounded once.
	w, x := genRow(r, fw, 1, "random"), genRow(r, fx, 1, "random")
	sc, mn := scaleMinK4(w[4:16])
	var iacc, imin int32
	for s := range 8 {
		var sum int32
		for e := range 32 {
			b := w[16+32*(s/2)+e]
			q := int32(b & 0x0f)
			if s%2 == 1 {
				q = int32(b >> 4)
			}
			sum += q * int32(int8(x[4+32*s+e]))
		}
		iacc += int32(sc[s]) * sum
		imin += int32(mn[s]) * (bsumK(x, 2*s) + bsumK(x, 2*s+1))
	}
	d8 := math.Float32frombits(binary.LittleEndian.Uint32(x[0:4]))
	want := float32(float32(iacc)*float32(f16At(w, 0)*d8)) - float32(float32(imin)*float32(f16At(w, 2)*d8))
	if got := DotQ4_KQ8_KGemv(qkK, w, x); got != want {
		t.Fatalf("one block: %g, want %g", got, want)
	}
}

// TestQ4_KGemvFastMatchesGeneric requires the assembly to return the
// generic code's bits, on random and adversarial blocks and raw bytes
// (any scales, any bsums).
func TestQ4_KGemvFastMatchesGeneric(t *testing.T) {
	if !hasFast {
		t.Skip("simd: no fast implementation on this CPU/build; generic only")
	}
	r := rand.New(rand.NewPCG(93, 94))
	fw, fx := formats["Q4_K"], formats["Q8_K"]
	check := func(name string, nb int, w, x []byte) {
		t.Helper()
		want := dotQ4_KQ8_KGemvGeneric(nb, w, x)
		got := DotQ4_KQ8_KGemv(nb*qkK, w, x)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Errorf("Q4_K gemv %s nb=%d: %s %g (%#08x), generic %g (%#08x)", name, nb, Impl(), got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for _, mode := range modes {
		for _, nb := range blockCounts(qkK) {
			for range 3 {
				check(mode, nb, genRow(r, fw, nb, mode), genRow(r, fx, nb, mode))
			}
		}
	}
	for _, nb := range []int{1, 3} {
		w, x := make([]byte, nb*fw.bytes), make([]byte, nb*fx.bytes)
		for range 20 {
			for i := range w {
				w[i] = byte(r.Uint32())
			}
			for i := range x {
				x[i] = byte(r.Uint32())
			}
			check("raw", nb, w, x)
		}
	}
}
