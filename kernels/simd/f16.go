package simd

import "math"

// F16ToF32 converts one IEEE 754 binary16 value (bits) to float32. The
// conversion is exact; NaNs keep their payload and come out quiet, as with
// the F16C instruction VCVTPH2PS.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // Inf or NaN
		if mant != 0 {
			return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
		}
		return math.Float32frombits(sign | 0x7f800000)
	case exp != 0: // normal: rebias 15 -> 127
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	default: // subnormal: mant * 2^-24, exact in float32
		v := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
}

// F32ToF16 converts a float32 to IEEE 754 binary16 bits, rounding to nearest
// even (as VCVTPS2PH with rounding control 0): values at or above 65520 in
// magnitude become infinity, tiny values become subnormals or signed zero,
// NaNs stay NaN (quiet, top payload bits kept).
func F32ToF16(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	abs := bits & 0x7fffffff
	switch {
	case abs > 0x7f800000: // NaN
		return sign | 0x7e00 | uint16(abs>>13)&0x3ff
	case abs >= 0x477ff000: // >= 65520 rounds to Inf (65504 has an odd mantissa)
		return sign | 0x7c00
	case abs >= 0x38800000: // normal half (>= 2^-14)
		h := (abs - 0x38000000) >> 13 // rebias 127 -> 15, drop 13 bits
		rem := abs & 0x1fff
		if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
			h++ // may carry into the exponent: still correct
		}
		return sign | uint16(h)
	default: // subnormal half or zero: round(|f| * 2^24)
		e := abs >> 23
		if e < 102 { // |f| < 2^-25: below half the smallest subnormal
			return sign
		}
		m := abs&0x7fffff | 0x800000 // |f| = m * 2^(e-150)
		shift := 126 - e             // 14..24
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
}

// BF16ToF32 converts bfloat16 bits to float32 (exact: bf16 is the top half
// of a float32).
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F16ToF32Row converts len(src) halves to float32 into dst.
// len(dst) must equal len(src).
func F16ToF32Row(src []uint16, dst []float32) {
	checkLen2("F16ToF32Row", len(src), len(dst))
	if fast.Load() && len(src) > 0 {
		f16ToF32RowAVX2(src, dst)
		return
	}
	f16ToF32RowGeneric(src, dst)
}

// F32ToF16Row converts len(src) float32 values to halves (round to nearest
// even) into dst. len(dst) must equal len(src).
func F32ToF16Row(src []float32, dst []uint16) {
	checkLen2("F32ToF16Row", len(src), len(dst))
	if fast.Load() && len(src) > 0 {
		f32ToF16RowAVX2(src, dst)
		return
	}
	f32ToF16RowGeneric(src, dst)
}

func f16ToF32RowGeneric(src []uint16, dst []float32) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = F16ToF32(h)
	}
}

func f32ToF16RowGeneric(src []float32, dst []uint16) {
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = F32ToF16(f)
	}
}
