package kernels

import "fmt"

// MatMul computes dst = x · Wᵀ for a batch of m activation rows:
//
//	dst[i*w.Rows + r] = sum_c W[r][c] * x[i*w.Cols + c]     i < m, r < w.Rows
//	x   []float32 // [m][w.Cols]
//	dst []float32 // [m][w.Rows]
//
// As in llama.cpp's CPU backend, x's rows are first converted to W's
// vec_dot_type (Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for the
// K-quants, F16/BF16 for F16/BF16, none for F32) into the Pool's scratch.
// Then the weight rows are split across the workers in tiles; a worker
// computes its rows against all m activation rows while the weight row is
// hot in L1, so each weight byte comes from memory once per call however
// large m is.
//
// Batch invariance: dst row i depends only on x row i and W, computed by the
// same dot in the same order whatever m is and whichever worker runs it.
//
// MatMul allocates nothing once the Pool's scratch has grown to the largest
// m*Cols seen. It panics if w is invalid (see Matrix.Validate) or x, dst
// are too short.
func (p *Pool) MatMul(dst []float32, w *Matrix, x []float32, m int) {
	rb := w.rowBytes()
	if m < 0 || len(x) < m*w.Cols || len(dst) < m*w.Rows {
		panic(fmt.Sprintf("kernels: MatMul %dx%d %s with m=%d: x has %d elements (need %d), dst %d (need %d)",
			w.Rows, w.Cols, w.Type, m, len(x), m*w.Cols, len(dst), m*w.Rows))
	}
	if m == 0 {
		return
	}
	vd := vecDots[w.Type]
	p.lock()
	defer p.mu.Unlock()

	t := &p.scratch.mm
	t.w, t.rb, t.vd, t.m, t.dst = w, rb, vd, m, dst
	if len(p.scratch.out4) < 16*p.threads {
		p.scratch.out4 = make([]float32, 16*p.threads)
	}
	t.out4 = p.scratch.out4
	if vd.convert == nil {
		t.x, t.xrb = bytesOfF32(x[:m*w.Cols]), 4*w.Cols
	} else {
		t.xrb, _ = vd.act.RowBytes(w.Cols)
		t.x = p.scratch.bytes(m * t.xrb)
		c := &p.scratch.conv
		c.dst, c.src, c.drb, c.cols, c.convert = t.x, x, t.xrb, w.Cols, vd.convert
		p.run(m, 1, c)
		*c = convTask{}
	}
	// Tiles of weight rows: enough chunks for dynamic balance, but not so
	// small that per-chunk overhead shows on small matrices.
	grain := max(16, (w.Rows+8*p.threads-1)/(8*p.threads))
	if w.Rows*w.Cols*m < 1<<15 {
		grain = w.Rows // tiny: not worth waking workers
	}
	p.run(w.Rows, grain, t)
	*t = matmulTask{}
}

// matmulTask computes dst for the weight rows [lo, hi) of one MatMul.
type matmulTask struct {
	w    *Matrix
	rb   int // bytes per weight row
	vd   vecDot
	x    []byte // [m][xrb] activations in vd.act layout
	xrb  int    // bytes per activation row
	m    int
	dst  []float32 // [m][w.Rows]
	out4 []float32 // [threads][16] per-worker dot4 results (first 4 used)
}

func (t *matmulTask) Run(worker, lo, hi int) {
	w, rows, cols, dot := t.w.Data, t.w.Rows, t.w.Cols, t.vd.dot
	// Sub-tiles of about tileBytes of weights stay in L1 while every
	// activation row passes over them, so each x row is also read from L1
	// for the whole sub-tile instead of streaming all m rows from L2 per
	// weight row.
	tile := max(1, tileBytes/t.rb)
	m, xrb, dot4 := t.m, t.xrb, t.vd.dot4
	// A local [4]float32 would escape to the heap through the indirect
	// call; each worker has its own cache line of scratch instead.
	out4 := (*[4]float32)(t.out4[worker*16 : worker*16+4])
	for r0 := lo; r0 < hi; r0 += tile {
		r1 := min(r0+tile, hi)
		i := 0
		if dot4 != nil {
			// Four activation rows per pass over each weight row.
			for ; i+4 <= m; i += 4 {
				xi := t.x[i*xrb : (i+4)*xrb]
				for r := r0; r < r1; r++ {
					dot4(cols, w[r*t.rb:(r+1)*t.rb], xi, xrb, out4)
					for k, v := range out4 {
						t.dst[(i+k)*rows+r] = v
					}
				}
			}
		}
		for ; i < m; i++ {
			xi := t.x[i*xrb : (i+1)*xrb]
			out := t.dst[i*rows : (i+1)*rows]
			for r := r0; r < r1; r++ {
				out[r] = dot(cols, w[r*t.rb:(r+1)*t.rb], xi)
			}
		}
	}
}

// tileBytes is the weight bytes a MatMul sub-tile aims for: half of a 32 KiB
// L1 data cache, leaving room for the activation row.
const tileBytes = 16 << 10

// convTask converts activation rows [lo, hi) to the vec_dot_type layout.
type convTask struct {
	dst     []byte // [m][drb]
	src     []float32
	drb     int
	cols    int
	convert func(x []float32, dst []byte)
}

func (t *convTask) Run(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		t.convert(t.src[i*t.cols:(i+1)*t.cols], t.dst[i*t.drb:(i+1)*t.drb])
	}
}
