package quant

import "math"

// f16Table maps every IEEE binary16 bit pattern to its float32 value, as
// ggml's ggml_table_f32_f16. Every half is exactly representable in float32,
// so the table is the exact conversion; NaNs come back quiet (quiet bit set,
// payload kept), which is what both F16C's vcvtph2ps and ggml's portable
// ggml_compute_fp16_to_fp32 produce.
var f16Table [1 << 16]float32

func init() {
	for h := range f16Table {
		f16Table[h] = f16ToF32Slow(uint16(h))
	}
}

// f16ToF32Slow decodes one half by its fields. Used to fill f16Table.
func f16ToF32Slow(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0: // ±Inf
		return math.Float32frombits(sign | 0x7f800000)
	case exp == 0x1f: // NaN: quiet it, keep the payload in the top mantissa bits
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case exp == 0 && mant == 0: // ±0
		return math.Float32frombits(sign)
	case exp == 0: // subnormal half: mant * 2^-24, a normal float32
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// F16ToF32 converts an IEEE binary16 bit pattern to float32 (exact).
func F16ToF32(h uint16) float32 { return f16Table[h] }

// F32ToF16 converts f to the nearest IEEE binary16, ties to even, as x86
// F16C's _cvtss_sh(f, 0) does (the conversion llama.cpp's CPU backend uses
// for activation scales and F16 KV caches):
//
//   - finite values round to nearest even, including into and out of the
//     subnormal range; |f| >= 65520 becomes ±Inf;
//   - ±Inf stays ±Inf;
//   - NaN stays NaN with the sign and top 9 payload bits kept and the quiet
//     bit set (sign|0x7e00|mant>>13).
//
// ggml's portable ggml_compute_fp32_to_fp16 (used by the reference
// quantizers in ggml-base) agrees on every non-NaN input; it maps every NaN
// to sign|0x7e00.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // biased half exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Half subnormal: value = m * 2^(e-14-10) with m the 24-bit
		// significand; the half mantissa is m >> (14-e).
		if e < -10 {
			return sign // below 2^-25: rounds to zero
		}
		m := mant | 0x800000
		shift := uint(14 - e) // 14..24
		h := m >> shift
		rem := m & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || (rem == halfway && h&1 == 1) {
			h++ // may carry into the smallest normal (0x400): still right
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry out of the mantissa bumps the exponent, up to Inf
	}
	return sign | uint16(h)
}

// BF16ToF32 converts a bfloat16 bit pattern to float32 (exact: bf16 is the
// top half of a float32).
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 converts f to bfloat16 as ggml_compute_fp32_to_bf16: round to
// nearest even; NaN keeps its sign and top payload bits and is forced quiet
// (bit 6 of the bf16 set). Overflow rounds to ±Inf.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + ((u >> 16) & 1))) >> 16)
}

// F16ToF32Row converts len(src) halves into dst[:len(src)].
// dst must be at least as long as src.
func F16ToF32Row(src []uint16, dst []float32) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = f16Table[h]
	}
}

// F32ToF16Row converts len(src) floats into dst[:len(src)] (see F32ToF16).
func F32ToF16Row(src []float32, dst []uint16) {
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = F32ToF16(f)
	}
}

// BF16ToF32Row converts len(src) bfloat16 values into dst[:len(src)].
func BF16ToF32Row(src []uint16, dst []float32) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = math.Float32frombits(uint32(h) << 16)
	}
}

// F32ToBF16Row converts len(src) floats into dst[:len(src)] (see F32ToBF16).
func F32ToBF16Row(src []float32, dst []uint16) {
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = F32ToBF16(f)
	}
}
