package kernels

import (
	"fmt"

	"kiln/kernels/simd"
)

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
// 8 use the vector exp, the last dim%8 elements of each row glibc's expf
// (simd.SwiGLU). Large calls are split across p's workers in pieces of
// siluChunk elements that start at multiples of 8 within a row, so every
// element is computed exactly as in the one-row call:
//
//	row r: [chunk 0: 1024][chunk 1: 1024]...[last: <= 1024, with the dim%8 tail]
//
// p may be nil (one thread).
func SiLUMulRows(p *Pool, gate, up []float32, rows, dim int) {
	if len(gate) != len(up) || len(gate) < rows*dim || rows < 0 || dim < 0 {
		panic(fmt.Sprintf("kernels: SiLUMulRows %d rows of %d: gate %d, up %d", rows, dim, len(gate), len(up)))
	}
	if dim == 0 {
		return
	}
	chunks := (dim + siluChunk - 1) / siluChunk
	t := siluTask{gate: gate, up: up, dim: dim, chunks: chunks}
	if rows*dim < 1<<14 || p == nil {
		t.Run(0, 0, rows*chunks)
		return
	}
	p.lock()
	defer p.mu.Unlock()
	p.scratch.silu = t
	p.run(rows*chunks, 0, &p.scratch.silu)
	p.scratch.silu = siluTask{}
}

// siluChunk is the elements of one SiLUMulRows work item (a multiple of 8):
// 4 KiB of each operand.
const siluChunk = 1024

// siluTask computes work items [lo, hi): item i is chunk i%chunks of row
// i/chunks.
type siluTask struct {
	gate, up    []float32
	dim, chunks int
}

func (t *siluTask) Run(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		r, c := i/t.chunks, i%t.chunks
		a, b := r*t.dim+c*siluChunk, r*t.dim+min((c+1)*siluChunk, t.dim)
		simd.SwiGLU(t.gate[a:b], t.gate[a:b], t.up[a:b])
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

// SiLUDivScalar is the sigmoid of x as llama.cpp's qwen2moe graph computes
// its shared-expert gate, ggml_div(ggml_silu(x), x) on a one-element row:
// ggml_vec_silu_f32's scalar tail x/(1+expf(-x)) with glibc's expf (not
// the 8-wide vector exp), rounded, then divided by x. x = 0 gives NaN, as
// there.
func SiLUDivScalar(x float32) float32 {
	s := x / (1 + expf(-x))
	return s / x
}
