package kernels

import (
	"fmt"
	"math"
)

// RMSNorm computes one row dst = x / sqrt(mean(x²) + eps) * weight, as
// ggml_compute_forward_rms_norm_f32 followed by ggml_mul: each square is
// rounded to float32 and summed in float64 (ggml_float), the mean and the
// scale 1/sqrtf(mean+eps) are float32, and dst[i] = (x[i]*scale)*weight[i].
// weight may be nil (no scaling). dst may alias x. len(dst), len(x) and
// len(weight) (when not nil) must be equal. The result is bit-identical to
// ggml's (TestRMSNormGgml).
func RMSNorm(dst, x, weight []float32, eps float32) {
	if len(dst) != len(x) || (weight != nil && len(weight) != len(x)) {
		panic(fmt.Sprintf("kernels: RMSNorm lengths dst %d, x %d, weight %d differ", len(dst), len(x), len(weight)))
	}
	if len(x) == 0 {
		return
	}
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	if weight == nil {
		for i, v := range x {
			dst[i] = v * scale
		}
		return
	}
	weight = weight[:len(x)]
	for i, v := range x {
		dst[i] = (v * scale) * weight[i]
	}
}

// RMSNormRows applies RMSNorm to rows rows of dim elements each (x, dst:
// [rows][dim]; weight: [dim] or nil), in parallel on p when the work is
// large enough to pay for it. dst may alias x.
func RMSNormRows(p *Pool, dst, x, weight []float32, rows, dim int, eps float32) {
	if rows < 0 || dim < 0 || len(x) < rows*dim || len(dst) < rows*dim || (weight != nil && len(weight) != dim) {
		panic(fmt.Sprintf("kernels: RMSNormRows %dx%d: x has %d, dst %d, weight %d elements", rows, dim, len(x), len(dst), len(weight)))
	}
	if rows*dim < 1<<14 || p == nil {
		for r := 0; r < rows; r++ {
			RMSNorm(dst[r*dim:(r+1)*dim], x[r*dim:(r+1)*dim], weight, eps)
		}
		return
	}
	p.lock()
	defer p.mu.Unlock()
	t := &p.scratch.norm
	*t = normTask{dst: dst, x: x, weight: weight, dim: dim, eps: eps}
	p.run(rows, 0, t)
	*t = normTask{}
}

type normTask struct {
	dst, x, weight []float32
	dim            int
	eps            float32
}

func (t *normTask) Run(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		RMSNorm(t.dst[r*t.dim:(r+1)*t.dim], t.x[r*t.dim:(r+1)*t.dim], t.weight, t.eps)
	}
}
