package kernels

import "fmt"

// Repacking at load time.
//
// MatMul's GEMMs read weight rows through panels (simd's register-tiled
// layout). For Q8_0 and Q4_0 the panels can be built once for the life of
// the model instead of on every call (see simd.PackQ8_0, PackQ4_0), and
// Q4_K's rows can at least be laid out as one stream per panel
// (simd.PackQ4_K, the per-call panels built from it): they
// take exactly the bytes of the raw rows (Q4_K experts' panels, read in
// place by the avx512vnni set, 2.8% more: simd.PackQ4_KG), every batch
// size reads them
// (decode included), and every output keeps its bits. Repack builds them;
// MatMul uses them when a matrix has them. As with llama.cpp's repacking
// buffer, the repacked copy lives in anonymous memory (huge pages where
// the system gives them on request), while the file's pages of the same
// rows are no longer touched (model.Load evicts them, gguf.File.Evict).
//
//	Matrix.Data   raw rows, from the mapping: [Rows][RowBytes]   (tail rows and Row() still read it)
//	Matrix.packed panels of the whole panels' rows: Q8_0 [Rows/8][nb][8*34],
//	              Q4_0 [Rows/16][nb][16*18], Q4_K [Rows/8][nb][8*144],
//	              Q4_K experts [Rows/16][nb][16*148] (simd.PackQ4_KG)

// loadLayoutOf returns m's load-time layout, or nil: the layout belongs to
// the GEMM of m's summation order (vecDotFor), so Q4_0 and Q4_K matrices
// with Rows%8 != 0, which llama.cpp does not repack, have none; nor do
// matrices smaller than a panel.
func loadLayoutOf(m *Matrix) *loadLayout {
	g := vecDotFor(m).gemm
	if g == nil || g.load == nil || m.Rows < g.load.rows {
		return nil
	}
	return g.load
}

// Repackable reports whether Repack has a load-time layout for m's type
// and shape: Q8_0 with at least 8 rows, Q4_0 with at least 16 and Q4_K
// with at least 8 (16 for an expert's, MulMatID), both with Rows%8 == 0
// (their other shapes use another summation order, see vecDotFor).
func Repackable(m *Matrix) bool {
	if _, err := m.Type.RowBytes(m.Cols); err != nil || m.Cols <= 0 || !Supported(m.Type) {
		return false
	}
	return loadLayoutOf(m) != nil
}

// Repack builds the load-time panels of every matrix in ms that has a
// load-time layout (Repackable) and none yet, splitting the work across
// the pool's workers. Matrices that share one *Matrix are packed once; two
// Matrix values are two copies. It returns an error, and repacks nothing
// more, if memory cannot be had; the matrices then work as before.
func (p *Pool) Repack(ms ...*Matrix) error {
	for _, m := range ms {
		if m.packed != nil || !Repackable(m) {
			continue
		}
		if err := m.Validate(); err != nil {
			return err
		}
		rb, k := m.rowBytes(), loadLayoutOf(m)
		buf, free, err := allocAnon(k.bytes(m.Cols, m.Rows))
		if err != nil {
			return fmt.Errorf("kernels: repacking a %dx%d %s matrix: %w", m.Rows, m.Cols, m.Type, err)
		}
		t := &repackTask{m: m, k: k, rb: rb, dst: buf}
		p.run(m.Rows/k.rows, 0, t)
		m.packed, m.freePacked = buf, free
	}
	return nil
}

// Unpack drops the load-time panels of the matrices in ms (after Repack;
// MatMul goes back to the raw rows). Call it only when no MatMul can be
// using them: the memory is unmapped.
func Unpack(ms ...*Matrix) {
	for _, m := range ms {
		if m.packed != nil {
			m.packed = nil
			m.freePacked()
			m.freePacked = nil
		}
	}
}

// Repacked reports whether m has load-time panels.
func (m *Matrix) Repacked() bool { return m.packed != nil }

// repackTask packs the panels [lo, hi) of m.
type repackTask struct {
	m   *Matrix
	k   *loadLayout
	rb  int
	dst []byte
}

func (t *repackTask) Run(_, lo, hi int) {
	P := t.k.rows
	pb := t.k.bytes(t.m.Cols, P) // one panel
	t.k.pack(t.m.Cols, t.m.Data[P*lo*t.rb:], t.rb, P*(hi-lo), t.dst[lo*pb:hi*pb])
}
