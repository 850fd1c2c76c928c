package kernels

import (
	"fmt"

	"kiln/gguf"
	"kiln/kernels/simd"
)

// ExpertOp is one expert's product in a MulMatID call: the rows of its
// group, taken from the call's activations, times its weight matrix.
//
//	Dst[g*W.Rows + r] = sum_c W[r][c] * x[row(g)*Cols + c]     g < n
//	row(g) = Rows[g]      when Rows != nil (n = len(Rows)): a gathered group
//	row(g) = First + g    otherwise (n = N): a contiguous group
//	Dst []float32 // [n][W.Rows]
type ExpertOp struct {
	Dst      []float32
	W        *Matrix
	Rows     []int32
	First, N int
}

// rows returns the op's group size.
func (o *ExpertOp) rows() int {
	if o.Rows != nil {
		return len(o.Rows)
	}
	return o.N
}

// MulMatID multiplies the groups of a mixture-of-experts step, llama.cpp's
// ggml_mul_mat_id, in one go:
//
//	x   []float32 // [xRows][Cols], the same Cols for every op's W
//	ops[j].Dst = x[group j] · ops[j].Wᵀ
//
// It computes what a MatMul (or MatMuls) per op over its gathered rows
// gives, bit for bit, with less work around the products:
//   - each row of x is converted to a vec_dot_type (and prepared for a GEMM)
//     once, however many groups take it (a row routed to k experts was
//     converted k times); the converted rows are then gathered per group;
//   - the weight rows of all the ops are split across the workers in one
//     dispatch, so that eight experts of one decode row, or many small
//     groups of a prompt chunk, keep every worker busy with one wake-up
//     instead of two per expert.
//
// Each output is one dot of one row, in the order MatMul uses for the
// op's matrix and group size: a row's results do not depend on which rows
// share its group or the call. Ops with an empty group are skipped. It
// allocates nothing in steady state (ops is the caller's). It panics if a
// matrix is invalid, the Cols differ, a group row is out of range or a
// Dst is short.
func (p *Pool) MulMatID(x []float32, xRows int, ops []ExpertOp) {
	p.lock()
	defer p.mu.Unlock()
	p.mulMatID(x, xRows, ops)
}

func (p *Pool) mulMatID(x []float32, xRows int, ops []ExpertOp) {
	if len(ops) == 0 {
		return
	}
	cols := ops[0].W.Cols
	for j := range ops {
		op := &ops[j]
		w := op.W
		w.rowBytes() // panics with Validate's error
		if w.Cols != cols {
			panic(fmt.Sprintf("kernels: MulMatID over matrices of %d and %d columns", cols, w.Cols))
		}
		n := op.rows()
		if xRows < 0 || len(x) < xRows*cols || op.N < 0 || len(op.Dst) < n*w.Rows {
			panic(fmt.Sprintf("kernels: MulMatID %dx%d %s, group of %d rows of %d: x has %d elements (need %d), dst %d (need %d)",
				w.Rows, w.Cols, w.Type, n, xRows, len(x), xRows*cols, len(op.Dst), n*w.Rows))
		}
		if op.Rows != nil {
			for _, r := range op.Rows {
				if r < 0 || int(r) >= xRows {
					panic(fmt.Sprintf("kernels: MulMatID group row %d of %d", r, xRows))
				}
			}
		} else if op.First < 0 || op.First+op.N > xRows {
			panic(fmt.Sprintf("kernels: MulMatID group rows [%d, %d) of %d", op.First, op.First+op.N, xRows))
		}
	}
	if xRows == 0 {
		return
	}
	p.cancelPrefetch() // an expert's matrix is not the one it was streaming
	s := &p.scratch
	if len(s.out4) < 16*p.threads {
		s.out4 = make([]float32, 16*p.threads)
	}
	if cap(s.mmOps) < len(ops) {
		s.mmOps = make([]mmOp, len(ops))
	}
	if cap(s.idConv) < len(ops) {
		s.idConv = make([]idConv, len(ops))
	}
	t := &s.mm
	t.ops, t.out4 = s.mmOps[:0], s.out4

	// Pass 1: each op's kernel, and which conversions (and GEMM
	// preparations) of the whole x the call needs, once per vec_dot_type.
	convs := s.idConv[:0]
	gemmRows, work, gather := 0, 0, 0
	for j := range ops {
		op := &ops[j]
		m := op.rows()
		if m == 0 {
			continue
		}
		vd := vecDotFor(op.W)
		rb, _ := op.W.Type.RowBytes(cols)
		o := mmOp{w: op.W, rb: rb, vd: vd, dst: op.Dst, m: m}
		work += op.W.Rows * m
		var useGemm, prep bool
		if vd.convert == nil {
			o.xrb = 4 * cols
		} else {
			o.xrb, _ = vd.act.RowBytes(cols)
			useGemm = vd.gemm != nil && (m == 1 || m >= vd.gemm.minRows || op.W.packed != nil)
			prep = useGemm && vd.gemm.act != nil
		}
		if useGemm {
			gemmRows += op.W.Rows
			o.grb = o.xrb
			if prep {
				o.grb = vd.gemm.actBytes(cols)
			}
		}
		ci := -1
		for k := range convs {
			if convs[k].act == vd.act {
				ci = k
			}
		}
		if ci < 0 {
			convs = append(convs, idConv{act: vd.act, convert: vd.convert, xrb: o.xrb})
			ci = len(convs) - 1
		}
		c := &convs[ci]
		if prep {
			c.gact, c.grb = vd.gemm.act, o.grb // one GEMM per act type: Q8_0's
		}
		if op.Rows != nil {
			if useGemm {
				gather += m * o.grb
			} else {
				gather += m * o.xrb
			}
		}
		o.conv, o.useGemm, o.prep = ci, useGemm, prep
		t.ops = append(t.ops, o)
	}
	if len(t.ops) == 0 {
		return
	}

	// Pass 2: convert (and prepare) every row of x once per type.
	nbuf := 0
	for k := range convs {
		c := &convs[k]
		if c.convert == nil {
			c.x = bytesOfF32(x[:xRows*cols])
		} else {
			c.x = s.actBuf(nbuf, xRows*c.xrb)
			nbuf++
		}
		if c.gact != nil {
			c.g = s.actBuf(nbuf, xRows*c.grb)
			nbuf++
		}
		if c.convert != nil || c.gact != nil {
			ct := &s.conv
			*ct = convTask{src: x, cols: cols, drb: c.xrb, dst: c.x, convert: c.convert, gdst: c.g, grb: c.grb, gact: c.gact}
			p.run(xRows, 1, ct)
			*ct = convTask{}
		}
	}

	// Pass 3: each op's rows: a slice of the converted rows for a
	// contiguous group, gathered (once per distinct group) otherwise.
	var gbuf []byte
	if gather > 0 {
		gbuf = s.actBuf(nbuf, gather)
	}
	off := 0
	for j, k := 0, 0; j < len(ops); j++ {
		op := &ops[j]
		if op.rows() == 0 {
			continue
		}
		o := &t.ops[k]
		k++
		c := &convs[o.conv]
		src, srb := c.x, o.xrb
		if o.prep {
			src, srb = c.g, o.grb
		}
		var rows []byte
		if op.Rows == nil {
			rows = src[op.First*srb : (op.First+op.N)*srb]
		} else {
			// An earlier op over the same group (gate and up) shares it.
			for i := 0; i < k-1; i++ {
				e := &t.ops[i]
				if e.group != nil && &e.group[0] == &op.Rows[0] && len(e.group) == len(op.Rows) &&
					e.conv == o.conv && e.prep == o.prep && e.gathered != nil {
					rows = e.gathered
					break
				}
			}
			if rows == nil {
				rows = gbuf[off : off+len(op.Rows)*srb]
				off += len(rows)
				for g, r := range op.Rows {
					copy(rows[g*srb:(g+1)*srb], src[int(r)*srb:(int(r)+1)*srb])
				}
			}
			o.group, o.gathered = op.Rows, rows
		}
		if o.useGemm {
			o.g = rows
			if !o.prep {
				o.x = rows
			}
		} else {
			o.x = rows
		}
	}

	rows := 0
	for k := range t.ops {
		t.ops[k].start = rows
		rows += t.ops[k].w.Rows
	}
	if gemmRows > 0 {
		t.gemmScratch = s.gemmBufs(p.threads, simd.GemmScratchBytes(cols))
	}
	if work*cols < 1<<15 {
		p.run(rows, rows, t) // tiny: not worth waking workers
	} else {
		p.runGuided(rows, 16, t)
	}
	clear(t.ops)
	*t = matmulTask{}
	clear(convs)
}

// idConv is one vec_dot_type's conversion of a MulMatID call's x, and
// its GEMM preparation when an op needs one.
type idConv struct {
	act     gguf.Type
	convert func(x []float32, dst []byte)
	xrb     int
	x       []byte // [xRows][xrb]
	gact    func(n int, x, dst []byte)
	grb     int
	g       []byte // [xRows][grb]
}
