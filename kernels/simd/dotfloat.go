package simd

// Float dots. The generic versions follow ggml-cpu/vec.c: each product is
// rounded to float32 and the products are summed in float64 (ggml_float).
// The AVX2 versions keep float32 lanes with FMA, as ggml's SIMD path does.

// DotF32 returns sum a[i]*b[i]. len(a) must equal len(b).
func DotF32(a, b []float32) float32 {
	checkLen2("DotF32", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotF32AVX2(a, b)
	}
	return dotF32Generic(a, b)
}

// DotF16 returns sum f16(a[i])*f16(b[i]) for IEEE half bits a, b
// (F16 weights against activations converted to F16).
func DotF16(a, b []uint16) float32 {
	checkLen2("DotF16", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotF16AVX2(a, b)
	}
	return dotF16Generic(a, b)
}

// DotBF16 returns sum bf16(a[i])*bf16(b[i]).
func DotBF16(a, b []uint16) float32 {
	checkLen2("DotBF16", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotBF16AVX2(a, b)
	}
	return dotBF16Generic(a, b)
}

// DotF32F16 returns sum a[i]*f16(b[i]): a float32 query against a float16
// key row in attention.
func DotF32F16(a []float32, b []uint16) float32 {
	checkLen2("DotF32F16", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotF32F16AVX2(a, b)
	}
	return dotF32F16Generic(a, b)
}

func dotF32Generic(a, b []float32) float32 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += float64(v * b[i])
	}
	return float32(s)
}

func dotF16Generic(a, b []uint16) float32 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += float64(F16ToF32(v) * F16ToF32(b[i]))
	}
	return float32(s)
}

func dotBF16Generic(a, b []uint16) float32 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += float64(BF16ToF32(v) * BF16ToF32(b[i]))
	}
	return float32(s)
}

func dotF32F16Generic(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += float64(v * F16ToF32(b[i]))
	}
	return float32(s)
}
