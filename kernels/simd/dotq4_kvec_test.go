package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Tests of DotQ4_KQ8_KVec (ggml_vec_dot_q4_K_q8_K's order). The repacked
// order, DotQ4_KQ8_K, is covered by the shared tables (quantDots, x4Dots,
// gemmCases); both are checked against llamaorder in
// llamaorder_q4_k_test.go.

// TestQ4_KVecGenericMatchesReference bounds the generic dot against the
// float64 dequantize-and-dot reference.
func TestQ4_KVecGenericMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	fw, fx := formats["Q4_K"], formats["Q8_K"]
	for _, mode := range modes {
		for _, nb := range blockCounts(qkK) {
			for rep := range 3 {
				w, x := genRow(r, fw, nb, mode), genRow(r, fx, nb, mode)
				got := dotQ4_KQ8_KVecGeneric(nb, w, x)
				want, abs := refQuant["Q4_K"](nb, w, x)
				if !within(got, want, abs) {
					t.Errorf("Q4_K vec %s nb=%d rep=%d: generic %g, reference %g (abs sum %g)", mode, nb, rep, got, want, abs)
				}
			}
		}
	}
}

// TestQ4_KVecFastMatchesGeneric requires the assembly to return the
// generic code's bits, on random and adversarial blocks, including
// activation quants of -128 and bsums that are not the quants' sums.
func TestQ4_KVecFastMatchesGeneric(t *testing.T) {
	if !hasFast {
		t.Skip("simd: no fast implementation on this CPU/build; generic only")
	}
	r := rand.New(rand.NewPCG(63, 64))
	fw, fx := formats["Q4_K"], formats["Q8_K"]
	check := func(name string, nb int, w, x []byte) {
		t.Helper()
		ForceGeneric(true)
		want := DotQ4_KQ8_KVec(nb*qkK, w, x)
		ForceGeneric(false)
		got := DotQ4_KQ8_KVec(nb*qkK, w, x)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Errorf("Q4_K vec %s nb=%d: %s %g (%#08x), generic %g (%#08x)", name, nb, Impl(), got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for _, mode := range modes {
		for _, nb := range blockCounts(qkK) {
			for range 3 {
				check(mode, nb, genRow(r, fw, nb, mode), genRow(r, fx, nb, mode))
			}
		}
	}
	for _, nb := range []int{1, 3} { // raw bytes: any scales, any bsums
		w, x := make([]byte, nb*fw.bytes), make([]byte, nb*fx.bytes)
		for rep := range 20 {
			for i := range w {
				w[i] = byte(r.Uint32())
			}
			for i := range x {
				x[i] = byte(r.Uint32())
			}
			check(fmt.Sprint("raw ", rep), nb, w, x)
		}
	}
}

func TestQ4_KVecShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	fw, fx := formats["Q4_K"], formats["Q8_K"]
	w, x := genRow(r, fw, 3, "random"), genRow(r, fx, 3, "random")
	for _, gen := range []bool{true, false} {
		ForceGeneric(gen)
		if got := DotQ4_KQ8_KVec(0, w, x); got != 0 {
			t.Errorf("n=0 generic=%v: got %g, want 0", gen, got)
		}
		if a, b := DotQ4_KQ8_KVec(2*qkK, w, x), DotQ4_KQ8_KVec(2*qkK, w[:2*fw.bytes], x[:2*fx.bytes]); a != b {
			t.Errorf("generic=%v: trailing bytes changed the result: %g vs %g", gen, a, b)
		}
		if a := testing.AllocsPerRun(10, func() { DotQ4_KQ8_KVec(3*qkK, w, x) }); a != 0 {
			t.Errorf("generic=%v: %v allocations per call", gen, a)
		}
	}
	ForceGeneric(false)
	for _, c := range []struct {
		name string
		n    int
		w, x []byte
	}{
		{"n not a multiple", qkK + 1, w, x},
		{"negative n", -qkK, w, x},
		{"short weights", 2 * qkK, w[:2*fw.bytes-1], x},
		{"short activations", 2 * qkK, w, x[:2*fx.bytes-1]},
		{"nil slices", qkK, nil, nil},
	} {
		msg := panicMessage(func() { DotQ4_KQ8_KVec(c.n, c.w, c.x) })
		if !strings.HasPrefix(msg, "simd: DotQ4_KQ8_KVec: ") {
			t.Errorf("%s: panic %q", c.name, msg)
		}
	}
}

// FuzzQ4_KVec: any bytes, fast and generic agree bit for bit (NaN only
// needs to be NaN). data[0] picks the block count (1..8).
func FuzzQ4_KVec(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3})
	f.Add([]byte{0, 0xff, 0x7b, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		nb := 1 + int(data[0])%8
		src := data[1:]
		w, x := make([]byte, nb*bytesQ4_K), make([]byte, nb*bytesQ8_K)
		for i := range w {
			w[i] = src[i%len(src)] ^ byte(i>>8)
		}
		for i := range x {
			x[i] = src[(i+7)%len(src)] ^ byte(i>>8)
		}
		ForceGeneric(true)
		want := DotQ4_KQ8_KVec(nb*qkK, w, x)
		ForceGeneric(false)
		got := DotQ4_KQ8_KVec(nb*qkK, w, x)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("nb=%d: %s %g (%#08x), generic %g (%#08x)", nb, Impl(), got, math.Float32bits(got), want, math.Float32bits(want))
		}
	})
}

func BenchmarkDotQ4_KVec(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	fw, fx := formats["Q4_K"], formats["Q8_K"]
	for _, n := range []int{2048, 5632} {
		nb := n / qkK
		w, x := genRow(r, fw, nb, "random"), genRow(r, fx, nb, "random")
		b.Run(fmt.Sprintf("Q4_K/n=%d", n), func(b *testing.B) {
			benchImpls(b, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					benchSink += DotQ4_KQ8_KVec(n, w, x)
				}
			})
		})
	}
}
