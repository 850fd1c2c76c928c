package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// relTol bounds |generic - reference| relative to the sum of absolute
// values of the summed terms: the generic dots round block products to
// float32 and sum them in float32, the float64 reference does not. It also
// bounds the float dots (F32/F16/BF16), whose SIMD versions sum in a
// different order. The quantized dots need no tolerance between
// implementations: they must agree bit for bit.
const relTol = 1e-5

type quantDot struct {
	w, x    string // weight and activation formats
	public  func(n int, w, x []byte) float32
	generic func(nb int, w, x []byte) float32
	fast    func(nb int, w, x []byte) float32
}

var quantDots = []quantDot{
	{"Q8_0", "Q8_0", DotQ8_0Q8_0, dotQ8_0Q8_0Generic, dotQ8_0Q8_0AVX2},
	{"Q4_0", "Q8_0", DotQ4_0Q8_0, dotQ4_0Q8_0Generic, dotQ4_0Q8_0AVX2},
	{"Q4_1", "Q8_1", DotQ4_1Q8_1, dotQ4_1Q8_1Generic, dotQ4_1Q8_1AVX2},
	{"Q5_0", "Q8_0", DotQ5_0Q8_0, dotQ5_0Q8_0Generic, dotQ5_0Q8_0AVX2},
	{"Q5_1", "Q8_1", DotQ5_1Q8_1, dotQ5_1Q8_1Generic, dotQ5_1Q8_1AVX2},
	{"Q2_K", "Q8_K", DotQ2_KQ8_K, dotQ2_KQ8_KGeneric, dotQ2_KQ8_KAVX2},
	{"Q3_K", "Q8_K", DotQ3_KQ8_K, dotQ3_KQ8_KGeneric, dotQ3_KQ8_KAVX2},
	{"Q4_K", "Q8_K", DotQ4_KQ8_K, dotQ4_KQ8_KGeneric, dotQ4_KQ8_KAVX2},
	{"Q5_K", "Q8_K", DotQ5_KQ8_K, dotQ5_KQ8_KGeneric, dotQ5_KQ8_KAVX2},
	{"Q6_K", "Q8_K", DotQ6_KQ8_K, dotQ6_KQ8_KGeneric, dotQ6_KQ8_KAVX2},
}

// blockCounts covers one block, small odd counts (tails of unrolled
// loops), and TinyLlama rows (2048 and 5632 elements).
func blockCounts(block int) []int {
	if block == qkK {
		return []int{1, 2, 3, 5, 8, 22}
	}
	return []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 64, 176}
}

func within(got float32, want, abs float64) bool {
	if math.IsNaN(float64(got)) || math.IsInf(float64(got), 0) {
		return false
	}
	return math.Abs(float64(got)-want) <= relTol*abs+1e-30
}

// TestQuantGenericMatchesReference checks each generic dot against an
// element-by-element float64 dequantize-and-dot reference.
func TestQuantGenericMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, q := range quantDots {
		fw, fx := formats[q.w], formats[q.x]
		for _, mode := range modes {
			for _, nb := range blockCounts(fw.block) {
				for rep := range 3 {
					w, x := genRow(r, fw, nb, mode), genRow(r, fx, nb, mode)
					got := q.generic(nb, w, x)
					want, abs := refQuant[q.w](nb, w, x)
					if !within(got, want, abs) {
						t.Errorf("%s·%s %s nb=%d rep=%d: generic %g, reference %g (abs sum %g)", q.w, q.x, mode, nb, rep, got, want, abs)
					}
				}
			}
		}
	}
}

// TestQuantFastMatchesGeneric checks each assembly dot against the generic
// one through the public entry points, on random and adversarial blocks:
// the results must have the same bits.
func TestQuantFastMatchesGeneric(t *testing.T) {
	if !hasFast {
		t.Skip("simd: no fast implementation on this CPU/build; generic only")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, q := range quantDots {
		fw, fx := formats[q.w], formats[q.x]
		for _, mode := range modes {
			for _, nb := range blockCounts(fw.block) {
				for rep := range 3 {
					w, x := genRow(r, fw, nb, mode), genRow(r, fx, nb, mode)
					n := nb * fw.block
					ForceGeneric(true)
					want := q.public(n, w, x)
					ForceGeneric(false)
					got := q.public(n, w, x)
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Errorf("%s·%s %s nb=%d rep=%d: %s %g (%#08x), generic %g (%#08x)", q.w, q.x, mode, nb, rep, Impl(), got, math.Float32bits(got), want, math.Float32bits(want))
					}
				}
			}
		}
	}
}

// TestQuantSliceSlack checks that bytes past the n/block blocks are ignored
// and that n=0 gives 0.
func TestQuantSliceSlack(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, q := range quantDots {
		fw, fx := formats[q.w], formats[q.x]
		w, x := genRow(r, fw, 3, "random"), genRow(r, fx, 3, "random")
		for _, gen := range []bool{true, false} {
			ForceGeneric(gen)
			if got := q.public(0, w, x); got != 0 {
				t.Errorf("%s n=0 generic=%v: got %g, want 0", q.w, gen, got)
			}
			a := q.public(2*fw.block, w, x)
			b := q.public(2*fw.block, w[:2*fw.bytes], x[:2*fx.bytes])
			if a != b {
				t.Errorf("%s generic=%v: trailing bytes changed the result: %g vs %g", q.w, gen, a, b)
			}
		}
		ForceGeneric(false)
	}
}

// TestQuantBadShapesPanic checks that violated preconditions panic with a
// simd: message naming the function, before reading memory.
func TestQuantBadShapesPanic(t *testing.T) {
	for _, q := range quantDots {
		fw, fx := formats[q.w], formats[q.x]
		w, x := make([]byte, 2*fw.bytes), make([]byte, 2*fx.bytes)
		cases := []struct {
			name string
			n    int
			w, x []byte
		}{
			{"n not a multiple", fw.block + 1, w, x},
			{"negative n", -fw.block, w, x},
			{"short weights", 2 * fw.block, w[:2*fw.bytes-1], x},
			{"short activations", 2 * fw.block, w, x[:2*fx.bytes-1]},
			{"nil slices", fw.block, nil, nil},
		}
		for _, c := range cases {
			msg := panicMessage(func() { q.public(c.n, c.w, c.x) })
			name := fmt.Sprintf("Dot%s%s", q.w, q.x)
			if !strings.HasPrefix(msg, "simd: "+name+": ") {
				t.Errorf("%s %s: panic %q, want a \"simd: %s: ...\" panic", q.w, c.name, msg, name)
			}
		}
	}
}

func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestQuantNoAllocs checks the hot path allocates nothing.
func TestQuantNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, q := range quantDots {
		fw, fx := formats[q.w], formats[q.x]
		w, x := genRow(r, fw, 8, "random"), genRow(r, fx, 8, "random")
		if a := testing.AllocsPerRun(10, func() { q.public(8*fw.block, w, x) }); a != 0 {
			t.Errorf("%s: %v allocations per call", q.w, a)
		}
	}
}
