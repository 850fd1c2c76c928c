package kernels

import "fmt"

// SiLUMul computes gate[i] = silu(gate[i]) * up[i], silu(x) = x/(1+e^-x):
// the SwiGLU of a llama feed-forward block (ggml_swiglu_split). e^x is
// exp32, the same approximation llama.cpp's AVX2 path uses.
// len(up) must equal len(gate).
func SiLUMul(gate, up []float32) {
	if len(gate) != len(up) {
		panic(fmt.Sprintf("kernels: SiLUMul lengths %d and %d differ", len(gate), len(up)))
	}
	for i, g := range gate {
		gate[i] = g / (1 + exp32(-g)) * up[i]
	}
}

// SiLUMulRows is SiLUMul over rows of dim elements ([rows][dim]), exactly as
// llama.cpp's ggml_vec_swiglu_f32 does it per row on AVX2: whole groups of
// 8 use the vector exp (exp32), the last dim%8 elements of each row glibc's
// expf (expf here).
func SiLUMulRows(gate, up []float32, rows, dim int) {
	if len(gate) != len(up) || len(gate) < rows*dim || rows < 0 || dim < 0 {
		panic(fmt.Sprintf("kernels: SiLUMulRows %d rows of %d: gate %d, up %d", rows, dim, len(gate), len(up)))
	}
	vec := dim - dim%8
	for r := 0; r < rows; r++ {
		g, u := gate[r*dim:(r+1)*dim], up[r*dim:(r+1)*dim]
		for i := 0; i < vec; i++ {
			g[i] = g[i] / (1 + exp32(-g[i])) * u[i]
		}
		for i := vec; i < dim; i++ {
			g[i] = g[i] / (1 + expf(-g[i])) * u[i]
		}
	}
}

// SiLU computes x[i] = x[i]/(1+e^-x[i]) in place.
func SiLU(x []float32) {
	for i, v := range x {
		x[i] = v / (1 + exp32(-v))
	}
}

// Add computes dst[i] = a[i] + b[i] (residual connections). dst may alias a or b.
func Add(dst, a, b []float32) {
	if len(a) != len(dst) || len(b) != len(dst) {
		panic(fmt.Sprintf("kernels: Add lengths dst %d, a %d, b %d differ", len(dst), len(a), len(b)))
	}
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// AddBias adds bias (length dim) to each of the rows of x ([rows][dim]),
// as the Q/K/V biases of qwen2.
func AddBias(x, bias []float32, rows int) {
	dim := len(bias)
	if rows < 0 || len(x) < rows*dim {
		panic(fmt.Sprintf("kernels: AddBias %d rows of %d: x has %d elements", rows, dim, len(x)))
	}
	for r := 0; r < rows; r++ {
		row := x[r*dim : (r+1)*dim]
		for i, b := range bias {
			row[i] += b
		}
	}
}
