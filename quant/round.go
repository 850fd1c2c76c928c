package quant

import "math"

// Rounding and float->int conversions as ggml's C code performs them on x86,
// spelled out so results do not depend on the Go port's platform.

// nearestInt is ggml's nearest_int: round to nearest, ties to even, by
// adding 1.5*2^23 and reading the low mantissa bits. Exact for
// |f| <= 4194303; outside that (and for NaN/Inf) it returns the same
// deterministic garbage as the C code.
func nearestInt(f float32) int {
	val := float32(f) + 12582912 // float32(): f may be an inlined product; no FMA
	i := int32(math.Float32bits(val))
	return int(i&0x007fffff) - 0x00400000
}

// truncI32 converts f to int32 toward zero as x86 cvttss2si does: NaN and
// out-of-range values give math.MinInt32 (the "integer indefinite" value).
// C's (int8_t)f and (uint8_t)f on x86 compile to this followed by keeping the
// low byte.
func truncI32(f float32) int32 {
	if !(f > -2147483904 && f < 2147483648) { // NaN fails both comparisons
		return math.MinInt32
	}
	return int32(f)
}

// roundf rounds half away from zero (C roundf), returning a float32.
func roundf(f float32) float32 { return float32(math.Round(float64(f))) }

// roundEven rounds half to even (_mm256_round_ps with _MM_ROUND_NEAREST,
// nearbyint in the default rounding mode).
func roundEven(f float32) float32 { return float32(math.RoundToEven(float64(f))) }

// cvtps2dq converts an already-rounded float to int32 as _mm256_cvtps_epi32:
// NaN and out-of-range give math.MinInt32.
func cvtps2dq(f float32) int32 { return truncI32(f) }

// sat8 saturates an int32 to int8 as the packs_epi32 + packs_epi16 pair does.
func sat8(v int32) int8 {
	if v > 127 {
		return 127
	}
	if v < -128 {
		return -128
	}
	return int8(v)
}

// fabsf clears the sign bit.
func fabsf(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// sqrtf is the correctly rounded float32 square root (float64 sqrt rounded
// once more is exact for float32 inputs).
func sqrtf(f float32) float32 { return float32(math.Sqrt(float64(f))) }
