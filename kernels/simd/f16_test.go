package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// f16Value is an independent decoding of a half: (-1)^s * 2^(e-15) * 1.m,
// or m * 2^-24 for subnormals, in float64 (exact).
func f16Value(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	switch e {
	case 0:
		return s * math.Ldexp(m, -24)
	case 31:
		if m == 0 {
			return math.Inf(int(s))
		}
		return math.NaN()
	}
	return s * math.Ldexp(1+m/1024, e-15)
}

func TestF16ToF32AllHalves(t *testing.T) {
	for h := range 1 << 16 {
		got, want := F16ToF32(uint16(h)), f16Value(uint16(h))
		if math.IsNaN(want) {
			bits := math.Float32bits(got)
			// Quiet NaN, sign kept, 10-bit payload in the top mantissa bits.
			if !math.IsNaN(float64(got)) || bits>>31 != uint32(h>>15) || bits&0x7fe000 != uint32(h&0x3ff)<<13|0x400000 {
				t.Fatalf("F16ToF32(%#04x) = %#08x, want quiet NaN with payload", h, bits)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Fatalf("F16ToF32(%#04x) = %g, want %g", h, got, want)
		}
	}
}

// TestF32ToF16RoundsToNearestEven checks F32ToF16 against the definition:
// the result is the nearest half, ties to the even mantissa, overflow to
// infinity at and above 65520.
func TestF32ToF16RoundsToNearestEven(t *testing.T) {
	check := func(f float32) {
		t.Helper()
		h := F32ToF16(f)
		if math.IsNaN(float64(f)) {
			if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("F32ToF16(NaN %#08x) = %#04x, want NaN", math.Float32bits(f), h)
			}
			return
		}
		if math.Signbit(float64(f)) != (h&0x8000 != 0) {
			t.Fatalf("F32ToF16(%g) = %#04x: sign lost", f, h)
		}
		a := math.Abs(float64(f))
		if a >= 65520 {
			if h&0x7fff != 0x7c00 {
				t.Fatalf("F32ToF16(%g) = %#04x, want infinity", f, h)
			}
			return
		}
		m := h & 0x7fff
		got := f16Value(m)
		err := math.Abs(got - a)
		for _, nb := range []uint16{m - 1, m + 1} {
			if nb > 0x7bff || (m == 0 && nb == 0xffff) {
				continue
			}
			e := math.Abs(f16Value(nb) - a)
			if e < err || (e == err && nb&1 == 0) {
				t.Fatalf("F32ToF16(%g) = %#04x (%g), but %#04x (%g) is nearer or the even tie", f, h, got, nb, f16Value(nb))
			}
		}
	}
	// Every half, and the midpoints and near-midpoints between neighbours.
	for h := uint16(0); h < 0x7c00; h++ {
		v := f16Value(h)
		check(float32(v))
		check(float32(-v))
		if h < 0x7bff {
			mid := (v + f16Value(h+1)) / 2
			for _, f := range []float32{float32(mid), math.Nextafter32(float32(mid), 0), math.Nextafter32(float32(mid), 1e9)} {
				check(f)
				check(-f)
			}
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 1 << 18 {
		check(math.Float32frombits(r.Uint32()))
	}
	for _, f := range []float32{0, 65504, 65519.99, 65520, 1e9, float32(math.Inf(1)), 1e-8, 2.98e-8, 5.96e-8, 6.1e-5, float32(math.NaN())} {
		check(f)
		check(-f)
	}
}

func TestF16RoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN payloads are quieted
		}
		if got := F32ToF16(F16ToF32(uint16(h))); got != uint16(h) {
			t.Fatalf("round trip of %#04x gave %#04x", h, got)
		}
	}
}

func TestBF16ToF32(t *testing.T) {
	for _, c := range []struct {
		h    uint16
		want float32
	}{{0x3f80, 1}, {0xc000, -2}, {0x0000, 0}, {0x7f80, float32(math.Inf(1))}, {0x3e80, 0.25}} {
		if got := BF16ToF32(c.h); got != c.want {
			t.Errorf("BF16ToF32(%#04x) = %g, want %g", c.h, got, c.want)
		}
	}
}

// TestRowConversions checks F16ToF32Row/F32ToF16Row, fast and generic,
// against the scalar conversions bit for bit, at every length up to 70
// (vector bodies and tails) and on all 65536 halves.
func TestRowConversions(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	srcs := [][]uint16{all}
	for n := range 71 {
		s := make([]uint16, n)
		for i := range s {
			s[i] = uint16(r.Uint32())
		}
		srcs = append(srcs, s)
	}
	for _, gen := range []bool{true, false} {
		ForceGeneric(gen)
		for _, src := range srcs {
			dst := make([]float32, len(src))
			F16ToF32Row(src, dst)
			for i, h := range src {
				if math.Float32bits(dst[i]) != math.Float32bits(F16ToF32(h)) {
					t.Fatalf("%s F16ToF32Row n=%d [%d] %#04x: %#08x, want %#08x", Impl(), len(src), i, h, math.Float32bits(dst[i]), math.Float32bits(F16ToF32(h)))
				}
			}
			back := make([]uint16, len(src))
			fs := make([]float32, len(src))
			for i := range fs {
				fs[i] = math.Float32frombits(r.Uint32())
				if i%3 == 0 {
					fs[i] = dst[i]
				}
			}
			F32ToF16Row(fs, back)
			for i, f := range fs {
				if back[i] != F32ToF16(f) {
					t.Fatalf("%s F32ToF16Row n=%d [%d] %#08x: %#04x, want %#04x", Impl(), len(src), i, math.Float32bits(f), back[i], F32ToF16(f))
				}
			}
		}
	}
	ForceGeneric(false)
}
