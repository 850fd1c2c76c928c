package quant

import (
	"math"
	"os"
	"testing"
)

// ggmlFP32ToFP16 is ggml's portable ggml_compute_fp32_to_fp16 (ggml-impl.h),
// transcribed as an independent reference for F32ToF16 on non-NaN inputs.
func ggmlFP32ToFP16(f float32) uint16 {
	scaleToInf := math.Float32frombits(0x77800000)
	scaleToZero := math.Float32frombits(0x08800000)
	base := float32(float32(fabsf(f)*scaleToInf) * scaleToZero)
	w := math.Float32bits(f)
	shl1w := w + w
	sign := w & 0x80000000
	bias := shl1w & 0xFF000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = math.Float32frombits((bias>>1)+0x07800000) + base
	bits := math.Float32bits(base)
	expBits := (bits >> 13) & 0x00007C00
	mantBits := bits & 0x00000FFF
	nonsign := expBits + mantBits
	if shl1w > 0xFF000000 {
		return uint16(sign>>16) | 0x7E00
	}
	return uint16(sign>>16) | uint16(nonsign)
}

func isNaN16(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }

func TestF16ToF32AllHalves(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := F16ToF32(h)
		exp, mant := int(h>>10)&0x1f, float64(h&0x3ff)
		var want float64
		switch {
		case exp == 0x1f && mant == 0:
			want = math.Inf(1)
		case exp == 0x1f:
			if !math.IsNaN(float64(f)) {
				t.Fatalf("half %#04x: got %v, want NaN", h, f)
			}
			if b := math.Float32bits(f); b&0x400000 == 0 || (b>>13)&0x1ff != uint32(h&0x1ff) || (b>>31) != uint32(h>>15) {
				t.Fatalf("half %#04x: NaN bits %#08x, want quiet with payload and sign kept", h, b)
			}
			continue
		case exp == 0:
			want = math.Ldexp(mant, -24)
		default:
			want = math.Ldexp(1024+mant, exp-25)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if float64(f) != want || math.Signbit(float64(f)) != (h&0x8000 != 0) {
			t.Fatalf("half %#04x: got %v, want %v", h, f, want)
		}
		// every non-NaN half survives the round trip, both conversions
		if got := F32ToF16(f); got != h {
			t.Fatalf("half %#04x: F32ToF16(F16ToF32) = %#04x", h, got)
		}
		if got := ggmlFP32ToFP16(f); got != h {
			t.Fatalf("half %#04x: ggml reference round trip = %#04x", h, got)
		}
	}
}

func TestF32ToF16Cases(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"zero", 0, 0x0000},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"max half", 65504, 0x7bff},
		{"rounds down to max", 65519.996, 0x7bff},
		{"tie to inf", 65520, 0x7c00},
		{"overflow", 1e6, 0x7c00},
		{"inf", float32(math.Inf(1)), 0x7c00},
		{"-inf", float32(math.Inf(-1)), 0xfc00},
		{"tie to even down", 1 + 1.0/2048, 0x3c00}, // halfway 1 and 1+2^-10
		{"tie to even up", 1 + 3.0/2048, 0x3c02},   // halfway 1+2^-10 and 1+2^-9
		{"above tie", math.Nextafter32(1+1.0/2048, 2), 0x3c01},
		{"smallest subnormal", 0x1p-24, 0x0001},
		{"half of smallest subnormal ties to zero", 0x1p-25, 0x0000},
		{"above half of smallest", math.Nextafter32(0x1p-25, 1), 0x0001},
		{"1.5 smallest ties to even", 0x1.8p-24, 0x0002},
		{"largest subnormal", 1023 * 0x1p-24, 0x03ff},
		{"subnormal rounds up to normal", 0x1.ffcp-15, 0x0400},
		{"smallest normal", 0x1p-14, 0x0400},
		{"tiny float32", 1e-30, 0x0000},
		{"float32 subnormal", math.Float32frombits(1), 0x0000},
		{"negative subnormal", -3 * 0x1p-24, 0x8003},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := F32ToF16(tc.in); got != tc.want {
				t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tc.in, got, tc.want)
			}
			if got := ggmlFP32ToFP16(tc.in); got != tc.want {
				t.Errorf("ggml reference(%g) = %#04x, want %#04x (test table wrong?)", tc.in, got, tc.want)
			}
		})
	}
}

func TestF32ToF16NaN(t *testing.T) {
	tests := []struct {
		bits uint32
		want uint16 // F16C: sign | 0x7e00 | top mantissa bits
	}{
		{0x7fc00000, 0x7e00},
		{0xffc00000, 0xfe00},
		{0x7f800001, 0x7e00}, // signalling, payload below half precision
		{0x7fbfe000, 0x7fff}, // signalling with full payload: quieted
		{0x7fc02000, 0x7e01},
	}
	for _, tc := range tests {
		f := math.Float32frombits(tc.bits)
		if got := F32ToF16(f); got != tc.want {
			t.Errorf("F32ToF16(%#08x) = %#04x, want %#04x", tc.bits, got, tc.want)
		}
		// ggml-base's conversion (used by Quantize to F16) makes every NaN 0x7e00|sign.
		var b [2]byte
		putF16Ref(b[:], f)
		if got, want := uint16(b[0])|uint16(b[1])<<8, uint16(tc.bits>>16)&0x8000|0x7e00; got != want {
			t.Errorf("putF16Ref(%#08x) = %#04x, want %#04x", tc.bits, got, want)
		}
	}
}

// TestF32ToF16Sampled compares against ggml's algorithm on every float32
// whose bit pattern is a multiple of a prime stride (about 1M values spread
// over all exponents), plus every pattern near rounding boundaries of halves.
func TestF32ToF16Sampled(t *testing.T) {
	check := func(u uint32) {
		f := math.Float32frombits(u)
		got, want := F32ToF16(f), ggmlFP32ToFP16(f)
		if math.IsNaN(float64(f)) {
			if !isNaN16(got) || got&0x8000 != want&0x8000 {
				t.Fatalf("%#08x: got %#04x, want a NaN with sign of %#04x", u, got, want)
			}
			return
		}
		if got != want {
			t.Fatalf("%#08x (%g): got %#04x, ggml %#04x", u, f, got, want)
		}
	}
	for u := uint64(0); u < 1<<32; u += 4093 {
		check(uint32(u))
	}
	for i := 0; i < 1<<16; i++ {
		f := F16ToF32(uint16(i))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		b := math.Float32bits(f)
		for d := uint32(0); d < 8; d++ { // around the half's value and the midpoints next to it
			for _, u := range []uint32{b + d, b - d, b + 0x1000 + d, b + 0x1000 - d, b - 0x1000 + d, b - 0x1000 - d} {
				check(u)
			}
		}
	}
}

// TestF32ToF16Exhaustive checks all 2^32 inputs; it takes tens of seconds,
// so it runs only with KILN_EXHAUSTIVE=1.
func TestF32ToF16Exhaustive(t *testing.T) {
	if os.Getenv("KILN_EXHAUSTIVE") == "" {
		t.Skip("set KILN_EXHAUSTIVE=1 to check all 2^32 float32 inputs")
	}
	for u := uint64(0); u < 1<<32; u++ {
		f := math.Float32frombits(uint32(u))
		got, want := F32ToF16(f), ggmlFP32ToFP16(f)
		if math.IsNaN(float64(f)) {
			if !isNaN16(got) || got&0x8000 != want&0x8000 {
				t.Fatalf("%#08x: got %#04x", u, got)
			}
			continue
		}
		if got != want {
			t.Fatalf("%#08x (%g): got %#04x, ggml %#04x", u, f, got, want)
		}
	}
}

func TestBF16(t *testing.T) {
	tests := []struct {
		name string
		in   uint32 // float32 bits
		want uint16
	}{
		{"one", 0x3f800000, 0x3f80},
		{"round down", 0x3f807fff, 0x3f80},
		{"tie to even (stay)", 0x3f808000, 0x3f80},
		{"tie to even (up)", 0x3f818000, 0x3f82},
		{"round up", 0x3f808001, 0x3f81},
		{"overflow to inf", 0x7f7fffff, 0x7f80},
		{"inf", 0x7f800000, 0x7f80},
		{"-inf", 0xff800000, 0xff80},
		{"quiet nan", 0x7fc00000, 0x7fc0},
		{"signalling nan forced quiet", 0x7f800001, 0x7fc0},
		{"nan payload kept", 0xff812345, 0xffc1},
		{"subnormal kept", 0x00010000, 0x0001},
		{"negative zero", 0x80000000, 0x8000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := F32ToBF16(math.Float32frombits(tc.in)); got != tc.want {
				t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
			}
		})
	}
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := BF16ToF32(h)
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("BF16ToF32(%#04x) bits %#08x", h, math.Float32bits(f))
		}
		got := F32ToBF16(f)
		if h&0x7f80 == 0x7f80 && h&0x7f != 0 { // NaN: comes back quiet
			if got != h|0x40 {
				t.Fatalf("bf16 NaN %#04x -> %#04x", h, got)
			}
			continue
		}
		if got != h {
			t.Fatalf("bf16 %#04x round trip -> %#04x", h, got)
		}
	}
}

func TestRowConversions(t *testing.T) {
	src := []float32{0, 1, -2.5, 65504, 1e-7, float32(math.Inf(-1))}
	h := make([]uint16, len(src))
	back := make([]float32, len(src))
	F32ToF16Row(src, h)
	F16ToF32Row(h, back)
	for i := range src {
		if h[i] != F32ToF16(src[i]) || back[i] != F16ToF32(h[i]) {
			t.Errorf("F16 row %d: %#04x %v", i, h[i], back[i])
		}
	}
	F32ToBF16Row(src, h)
	BF16ToF32Row(h, back)
	for i := range src {
		if h[i] != F32ToBF16(src[i]) || back[i] != BF16ToF32(h[i]) {
			t.Errorf("BF16 row %d: %#04x %v", i, h[i], back[i])
		}
	}
}
