package simd

import "math"

// Element-wise float32 helpers for norms, softmax, attention and residuals
// (ggml-cpu/vec.h). Slices passed together must have equal lengths; dst may
// alias a or b.

// Axpy computes y[i] += alpha*x[i].
func Axpy(alpha float32, x, y []float32) {
	checkLen2("Axpy", len(x), len(y))
	if fast.Load() && len(x) > 0 {
		axpyAVX2(alpha, x, y)
		return
	}
	axpyGeneric(alpha, x, y)
}

// AxpyF16 computes y[i] += alpha*f16(x[i]) (attention: accumulating a
// float16 value row weighted by a softmax probability).
func AxpyF16(alpha float32, x []uint16, y []float32) {
	checkLen2("AxpyF16", len(x), len(y))
	if fast.Load() && len(x) > 0 {
		axpyF16AVX2(alpha, x, y)
		return
	}
	axpyF16Generic(alpha, x, y)
}

// Scale computes x[i] *= alpha.
func Scale(alpha float32, x []float32) {
	if fast.Load() && len(x) > 0 {
		scaleAVX2(alpha, x)
		return
	}
	scaleGeneric(alpha, x)
}

// Add computes dst[i] = a[i] + b[i].
func Add(dst, a, b []float32) {
	checkLen3("Add", len(dst), len(a), len(b))
	if fast.Load() && len(dst) > 0 {
		addAVX2(dst, a, b)
		return
	}
	addGeneric(dst, a, b)
}

// Mul computes dst[i] = a[i] * b[i].
func Mul(dst, a, b []float32) {
	checkLen3("Mul", len(dst), len(a), len(b))
	if fast.Load() && len(dst) > 0 {
		mulAVX2(dst, a, b)
		return
	}
	mulGeneric(dst, a, b)
}

// SumSquares returns sum x[i]*x[i] (RMS norm). The generic version sums in
// float64 like ggml's rms_norm; the AVX2 one in float32 lanes.
func SumSquares(x []float32) float32 {
	if fast.Load() && len(x) > 0 {
		return sumSquaresAVX2(x)
	}
	return sumSquaresGeneric(x)
}

// Max returns the largest element of x, -Inf for an empty x, and NaN if any
// element is NaN.
func Max(x []float32) float32 {
	if fast.Load() && len(x) > 0 {
		return maxAVX2(x)
	}
	return maxGeneric(x)
}

func axpyGeneric(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func axpyF16Generic(alpha float32, x []uint16, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * F16ToF32(v)
	}
}

func scaleGeneric(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

func addGeneric(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func mulGeneric(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func sumSquaresGeneric(x []float32) float32 {
	var s float64
	for _, v := range x {
		s += float64(v * v)
	}
	return float32(s)
}

func maxGeneric(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v != v {
			return v
		}
		if v > m {
			m = v
		}
	}
	return m
}
