package kernels

import (
	"fmt"

	"kiln/kernels/simd"
)

// MatMul computes dst = x · Wᵀ for a batch of m activation rows:
//
//	dst[i*w.Rows + r] = sum_c W[r][c] * x[i*w.Cols + c]     i < m, r < w.Rows
//	x   []float32 // [m][w.Cols]
//	dst []float32 // [m][w.Rows]
//
// As in llama.cpp's CPU backend, x's rows are first converted to W's
// vec_dot_type (Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for the
// K-quants, F16/BF16 for F16/BF16, none for F32) into the Pool's scratch
// (and, for simd's GEMMs, prepared once more: int16 quants, float32
// scales). Then the weight rows are handed out to the workers in guided
// chunks, each weight byte read from memory once per call however large m:
//
//	x [m][Cols] --convert--> xq [m][RowBytes(Cols)] --prepare--> GEMM rows
//	W rows [chunk 0          ][chunk 1     ][c2 ][c3]...  multiples of 16 rows,
//	                                                      large first, small last
//	GEMM types (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K), m >= the type's threshold:
//	       [panel][panel]...  8 or 16 rows repacked into the worker's scratch
//	                          (L2); 1..4 activation rows per micro-kernel call,
//	                          a register tile of 8/16 weight rows x 4 rows
//	       m = 1: 8-row decode kernels reading W in place, prefetching ahead
//	       repacked matrices (Repack, Q8_0, Q4_0; Q4_K as one stream): the same
//	       kernels on panels built at load, for every m (decode too); tail
//	       rows as above
//	other types: sub-tiles of ~16 KiB hot in L1 while every activation row
//	       passes over them; single-row dots (4-row dots where simd has them)
//
//	dst[i*Rows + r] = dot(W[r], xq[i])
//
// Batch invariance: dst row i depends only on x row i and W, computed by the
// same dot in the same order whatever m is and whichever worker runs it.
//
// MatMul allocates nothing once the Pool's scratch has grown to the largest
// batch seen. It panics if w is invalid (see Matrix.Validate) or x, dst
// are too short.
func (p *Pool) MatMul(dst []float32, w *Matrix, x []float32, m int) {
	p.lock()
	defer p.mu.Unlock()
	ops := p.scratch.one[:]
	ops[0] = MatMulOp{Dst: dst, W: w}
	p.matMuls(x, m, ops)
	ops[0] = MatMulOp{}
}

// MatMulOp is one product of a MatMuls call: Dst = x · Wᵀ.
type MatMulOp struct {
	Dst []float32 // [m][W.Rows]
	W   *Matrix
}

// MatMuls computes several products of the same activations in one go, as
// the Q, K and V projections (or gate and up) of a layer:
//
//	ops[j].Dst = x · ops[j].Wᵀ     x: [m][Cols], the same Cols for every W
//
// x is converted once per distinct vec_dot_type, and the rows of all the
// matrices are split across the workers in a single dispatch, which keeps
// the small K/V projections from leaving workers idle. Each output is
// bit-identical to the one MatMul gives. It allocates nothing in steady
// state (ops is the caller's; keep it in a reused array). It panics on the
// same conditions as MatMul, or if the matrices' Cols differ.
func (p *Pool) MatMuls(x []float32, m int, ops []MatMulOp) {
	p.lock()
	defer p.mu.Unlock()
	p.matMuls(x, m, ops)
}

// matMuls is MatMuls for a caller holding p.mu.
func (p *Pool) matMuls(x []float32, m int, ops []MatMulOp) {
	if len(ops) == 0 {
		return
	}
	cols := ops[0].W.Cols
	for _, op := range ops {
		w := op.W
		w.rowBytes() // panics with Validate's error
		if w.Cols != cols {
			panic(fmt.Sprintf("kernels: MatMuls over matrices of %d and %d columns", cols, w.Cols))
		}
		if m < 0 || len(x) < m*w.Cols || len(op.Dst) < m*w.Rows {
			panic(fmt.Sprintf("kernels: MatMul %dx%d %s with m=%d: x has %d elements (need %d), dst %d (need %d)",
				w.Rows, w.Cols, w.Type, m, len(x), m*w.Cols, len(op.Dst), m*w.Rows))
		}
	}
	if m == 0 {
		return
	}
	p.cancelPrefetch() // this is the matrix it was streaming (or a surprise)
	s := &p.scratch
	if len(s.out4) < 16*p.threads {
		s.out4 = make([]float32, 16*p.threads)
	}
	if cap(s.mmOps) < len(ops) {
		s.mmOps = make([]mmOp, len(ops))
	}
	t := &s.mm
	t.ops, t.out4 = s.mmOps[:len(ops)], s.out4
	nbuf, rows, gemmRows := 0, 0, 0
	for j, op := range ops {
		vd := vecDotFor(op.W)
		rb, _ := op.W.Type.RowBytes(cols)
		o := &t.ops[j]
		*o = mmOp{w: op.W, rb: rb, vd: vd, dst: op.Dst, start: rows, m: m}
		rows += op.W.Rows
		if vd.convert == nil {
			o.x, o.xrb = bytesOfF32(x[:m*cols]), 4*cols
			continue
		}
		o.xrb, _ = vd.act.RowBytes(cols)
		// Repacked matrices always go through their panels: their raw rows'
		// pages were evicted (model.Load) and are not to be read again.
		useGemm := vd.gemm != nil && (m == 1 || m >= vd.gemm.minRows || op.W.packed != nil)
		// GEMM rows: prepared from the converted rows, or (act == nil) the
		// converted rows themselves.
		prep := useGemm && vd.gemm.act != nil
		if useGemm {
			gemmRows += op.W.Rows
		}
		if prep {
			o.grb = vd.gemm.actBytes(cols)
		}
		// Reuse an earlier op's conversion to the same type, and its
		// prepared GEMM rows if it has the same GEMM.
		for k := 0; k < j; k++ {
			if t.ops[k].vd.act == vd.act {
				o.x = t.ops[k].x
				if prep && t.ops[k].vd.gemm == vd.gemm && t.ops[k].g != nil {
					o.g = t.ops[k].g
				}
				break
			}
		}
		if o.x == nil || (prep && o.g == nil) {
			c := &s.conv
			*c = convTask{src: x, cols: cols, drb: o.xrb, dst: o.x}
			if o.x == nil {
				o.x = s.actBuf(nbuf, m*o.xrb)
				nbuf++
				c.dst, c.convert = o.x, vd.convert
			}
			if prep {
				o.g = s.actBuf(nbuf, m*o.grb)
				nbuf++
				c.gdst, c.grb, c.gact = o.g, o.grb, vd.gemm.act
			}
			p.run(m, 1, c)
			*c = convTask{}
		}
		if useGemm && !prep {
			o.g, o.grb = o.x, o.xrb
		}
	}
	if gemmRows > 0 {
		t.gemmScratch = s.gemmBufs(p.threads, simd.GemmScratchBytes(cols))
	}
	// Weight rows are handed out in guided chunks (large first, then
	// smaller), multiples of the GEMM panels (16 rows) so that chunks rarely
	// split a panel: long contiguous ranges keep decode's prefetch streams
	// going, small last chunks keep both workers busy to the end.
	if rows*cols*m < 1<<15 {
		p.run(rows, rows, t) // tiny: not worth waking workers
	} else {
		p.runGuided(rows, 16, t)
	}
	clear(t.ops)
	*t = matmulTask{}
	if m == 1 {
		p.prefetchNext(ops[0].W)
	}
}

// prefetchLimit bounds the bytes of the next matrix streamed in between two
// decode MatMuls (the gaps last tens of microseconds; L2 is 512 KiB).
const prefetchLimit = 2 << 20

// prefetchNext remembers which matrix followed the previous single-row
// MatMul and starts streaming in the one that followed w last time: a
// decode step calls the same matrices in the same order every token, and
// between two calls the cores do serial work while DRAM idles.
func (p *Pool) prefetchNext(w *Matrix) {
	s := &p.scratch
	if s.mmNext == nil {
		s.mmNext = make(map[*Matrix]*Matrix)
	}
	if s.mmLast != nil {
		s.mmNext[s.mmLast] = w
	}
	s.mmLast = w
	if next := s.mmNext[w]; next != nil {
		if next.packed != nil {
			p.prefetch(&next.packed, prefetchLimit)
		} else {
			p.prefetch(&next.Data, prefetchLimit)
		}
	}
}

// mmOp is one matrix of a MatMuls call, its rows numbered from start in the
// call's combined row space.
type mmOp struct {
	w     *Matrix
	rb    int // bytes per weight row
	vd    vecDot
	x     []byte // [m][xrb] activations in vd.act layout
	xrb   int    // bytes per activation row
	g     []byte // [m][grb] activations prepared for vd.gemm; nil: no GEMM
	grb   int    // bytes per prepared activation row
	dst   []float32
	start int
	m     int // activation rows (MulMatID: this expert's group)

	// MulMatID only: the index of the op's conversion, whether it runs
	// the GEMM (and on prepared rows), and its gathered group.
	conv          int
	useGemm, prep bool
	group         []int32
	gathered      []byte
}

// matmulTask computes the combined rows [lo, hi) of one MatMuls call.
type matmulTask struct {
	ops         []mmOp
	out4        []float32 // [threads][16] per-worker dot4 results (first 4 used)
	gemmScratch [][]byte  // [threads] per-worker GEMM panels
}

func (t *matmulTask) Run(worker, lo, hi int) {
	for j := range t.ops {
		o := &t.ops[j]
		a, b := max(lo, o.start), min(hi, o.start+o.w.Rows)
		if a < b {
			t.rows(o, a-o.start, b-o.start, worker)
		}
	}
}

// rows computes the weight rows [lo, hi) of o against all m activation rows.
func (t *matmulTask) rows(o *mmOp, lo, hi, worker int) {
	if o.g != nil && o.w.packed != nil {
		t.packedRows(o, lo, hi, worker)
		return
	}
	if o.g != nil {
		// The GEMM repacks 8 or 16 weight rows at a time into a panel in
		// the worker's scratch (L2) and runs every activation row over it.
		o.vd.gemm.run(o.w.Cols, o.w.Data[lo*o.rb:], o.rb, hi-lo, o.g, o.grb, o.m,
			o.dst[lo:], o.w.Rows, t.gemmScratch[worker])
		return
	}
	w, rows, cols, dot := o.w.Data, o.w.Rows, o.w.Cols, o.vd.dot
	// Sub-tiles of about tileBytes of weights stay in L1 while every
	// activation row passes over them, so each x row is also read from L1
	// for the whole sub-tile instead of streaming all m rows from L2 per
	// weight row.
	tile := max(1, tileBytes/o.rb)
	m, xrb, dot4 := o.m, o.xrb, o.vd.dot4
	// A local [4]float32 would escape to the heap through the indirect
	// call; each worker has its own cache line of scratch instead.
	out4 := (*[4]float32)(t.out4[worker*16 : worker*16+4])
	for r0 := lo; r0 < hi; r0 += tile {
		r1 := min(r0+tile, hi)
		i := 0
		if dot4 != nil {
			// Four activation rows per pass over each weight row.
			for ; i+4 <= m; i += 4 {
				xi := o.x[i*xrb : (i+4)*xrb]
				for r := r0; r < r1; r++ {
					dot4(cols, w[r*o.rb:(r+1)*o.rb], xi, xrb, out4)
					for k, v := range out4 {
						o.dst[(i+k)*rows+r] = v
					}
				}
			}
		}
		for ; i < m; i++ {
			xi := o.x[i*xrb : (i+1)*xrb]
			out := o.dst[i*rows : (i+1)*rows]
			r := r0
			if rows4 := o.vd.rows4; rows4 != nil {
				// Four weight rows per pass over the activation row.
				for ; r+4 <= r1; r += 4 {
					rows4(cols, xi, w[r*o.rb:(r+4)*o.rb], o.rb, out4)
					copy(out[r:r+4], out4[:])
				}
			}
			for ; r < r1; r++ {
				out[r] = dot(cols, w[r*o.rb:(r+1)*o.rb], xi)
			}
		}
	}
}

// packedRows is rows for a matrix with load-time panels: the whole panels
// in [lo, hi) from them, any rows outside whole panels (a chunk boundary
// inside a panel, the matrix's last rows short of a panel) through the per-call GEMM
// on the raw rows. Both give the same bits.
func (t *matmulTask) packedRows(o *mmOp, lo, hi, worker int) {
	w, P := o.w, o.vd.gemm.load.rows
	a := min(hi, (lo+P-1)/P*P)       // first panel boundary
	b := max(a, min(hi, w.Rows)/P*P) // end of the whole panels
	raw := func(lo, hi int) {
		if lo < hi {
			o.vd.gemm.run(w.Cols, w.Data[lo*o.rb:], o.rb, hi-lo, o.g, o.grb, o.m,
				o.dst[lo:], w.Rows, t.gemmScratch[worker])
		}
	}
	raw(lo, a)
	if a < b {
		o.vd.gemm.load.gemm(w.Cols, w.packed[o.vd.gemm.load.bytes(w.Cols, a):], b-a, o.g, o.grb, o.m, o.dst[a:], w.Rows, t.gemmScratch[worker])
	}
	raw(b, hi)
}

// tileBytes is the weight bytes a MatMul sub-tile aims for: half of a 32 KiB
// L1 data cache, leaving room for the activation row.
const tileBytes = 16 << 10

// convTask converts activation rows [lo, hi) to the vec_dot_type layout
// (when convert is set) and then, when gact is set, prepares the converted
// rows for a GEMM.
type convTask struct {
	dst     []byte // [m][drb]
	src     []float32
	drb     int
	cols    int
	convert func(x []float32, dst []byte)
	gdst    []byte // [m][grb]
	grb     int
	gact    func(n int, x, dst []byte)
}

func (t *convTask) Run(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		row := t.dst[i*t.drb : (i+1)*t.drb]
		if t.convert != nil {
			t.convert(t.src[i*t.cols:(i+1)*t.cols], row)
		}
		if t.gact != nil {
			t.gact(t.cols, row, t.gdst[i*t.grb:(i+1)*t.grb])
		}
	}
}
