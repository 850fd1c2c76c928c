package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"kiln/gguf"
	"kiln/kernels/simd"
)

// TestMatMulTypes checks MatMul for every supported weight type against a
// float64 reference over quant's dequantized weights and the activations as
// converted to the vec_dot_type: the only difference left is float32
// accumulation, bounded by 1e-5 of the sum of |terms| (simd's contract) plus
// a few ulps of the result. A second, looser check against the unconverted
// activations bounds the activation quantization error.
func TestMatMulTypes(t *testing.T) {
	pool := NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range testTypes {
		bs := typ.BlockSize()
		if bs == 1 {
			bs = 32
		}
		for _, shape := range []struct{ rows, cols int }{
			{37, bs},                // one block, odd rows (not a multiple of the tile)
			{301, max(9*bs, 3*256)}, // many blocks (9 of 32, 3 of 256), enough rows to split across workers
		} {
			w := randMatrix(r, typ, shape.rows, shape.cols)
			wrs := make([][]float64, shape.rows)
			for row := range wrs {
				wrs[row] = refRow(w, row)
			}
			for _, m := range []int{1, 3, 6, 16} { // 6: one 4-row pass plus two single rows
				x := randFloats(r, m*shape.cols, 1)
				dst := make([]float32, m*shape.rows)
				pool.MatMul(dst, w, x, m)
				for i := 0; i < m; i++ {
					xi := x[i*shape.cols : (i+1)*shape.cols]
					xq := refActRow(typ, xi)
					x64 := to64(xi)
					for row, wr := range wrs {
						want, abs := dot64(wr, xq)
						want += q8_1Correction(w, row, xi, xq)
						got := float64(dst[i*shape.rows+row])
						if tol := 1e-5*abs + 1e-6*math.Abs(want); math.Abs(got-want) > tol {
							t.Fatalf("%s %dx%d m=%d: dst[%d][%d] = %g, want %g (tol %g)", typ, shape.rows, shape.cols, m, i, row, got, want, tol)
						}
						exact, _ := dot64(wr, x64)
						if tol := actTol(typ, wr, xi); math.Abs(got-exact) > tol {
							t.Fatalf("%s %dx%d m=%d: dst[%d][%d] = %g, unquantized dot %g (tol %g)", typ, shape.rows, shape.cols, m, i, row, got, exact, tol)
						}
					}
				}
			}
		}
	}
}

// q8_1Correction: a Q4_1/Q5_1 dot against Q8_1 adds m_w*s_x per block,
// where s_x = f16(d_x*sum(q_x)) with the unrounded d_x (llama.cpp's
// formula), instead of m_w*sum(xq) as the dequantized product gives.
// It returns the difference (0 for other types).
func q8_1Correction(w *Matrix, row int, x []float32, xq []float64) float64 {
	if vecDots[w.Type].act != gguf.TypeQ8_1 {
		return 0
	}
	rb, _ := w.Type.RowBytes(w.Cols)
	wr := w.Data[row*rb : (row+1)*rb]
	act := make([]byte, len(x)/32*36)
	vecDots[w.Type].convert(x, act)
	var c float64
	for b := 0; b < len(x)/32; b++ {
		m := float64(simd.F16ToF32(binary.LittleEndian.Uint16(wr[b*w.Type.BlockBytes()+2:])))
		sx := float64(simd.F16ToF32(binary.LittleEndian.Uint16(act[b*36+2:])))
		var sum float64
		for _, v := range xq[32*b : 32*b+32] {
			sum += v
		}
		c += m * (sx - sum)
	}
	return c
}

// actTol bounds |dot(w, convert(x)) - dot(w, x)|: per element, the
// conversion error is at most half a step of the block's scale (amax/127 for
// the Q8 types, with the f16-rounded scale adding 2^-11 relative), or the
// rounding of a half (2^-11) or bfloat16 (2^-8); plus float32 accumulation.
func actTol(typ gguf.Type, w []float64, x []float32) float64 {
	bs, rel := 0, 0.0
	switch vecDots[typ].act {
	case gguf.TypeF32:
		rel = 0
	case gguf.TypeF16:
		rel = 1.0 / 2048
	case gguf.TypeBF16:
		rel = 1.0 / 256
	case gguf.TypeQ8_0, gguf.TypeQ8_1:
		bs = 32
	case gguf.TypeQ8_K:
		bs = 256
	}
	var tol, abs float64
	var amax float64
	for i, v := range x {
		abs += math.Abs(w[i] * float64(v))
		if bs == 0 {
			tol += math.Abs(w[i]*float64(v)) * rel
			continue
		}
		if i%bs == 0 {
			amax = 0
			for _, u := range x[i : i+bs] {
				amax = math.Max(amax, math.Abs(float64(u)))
			}
		}
		tol += math.Abs(w[i]) * amax * (0.5/127 + 1.0/1024)
	}
	return tol + 2e-5*abs + 1e-6
}

// TestMatMulBatchInvariance: a row's result is bit-identical whether it is
// computed alone (m=1) or inside a batch of 16, on 1 or several threads.
func TestMatMulBatchInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pools := []*Pool{NewPool(1), NewPool(4)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, typ := range testTypes {
		bs := max(32, typ.BlockSize())
		w := randMatrix(r, typ, 133, 8*bs)
		for _, m := range []int{16, 7, 33} { // 7: 4-row pass plus 3 single rows; 33: GEMM for every type (Q6_K from 24)
			x := randFloats(r, m*w.Cols, 1)
			batch := make([]float32, m*w.Rows)
			pools[1].MatMul(batch, w, x, m)
			one := make([]float32, w.Rows)
			for _, p := range pools {
				for i := 0; i < m; i++ {
					p.MatMul(one, w, x[i*w.Cols:(i+1)*w.Cols], 1)
					for row, v := range one {
						if b := batch[i*w.Rows+row]; math.Float32bits(b) != math.Float32bits(v) {
							t.Fatalf("%s threads=%d: row %d of %d, out %d: m=1 gives %g, batched %g", typ, p.Threads(), i, m, row, v, b)
						}
					}
				}
			}
		}
	}
}

func TestMatMulRejectsBadShapes(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	w := randMatrix(rand.New(rand.NewPCG(5, 6)), gguf.TypeQ4_0, 4, 64)
	mustPanic(t, "short x", func() { pool.MatMul(make([]float32, 8), w, make([]float32, 127), 2) })
	mustPanic(t, "short dst", func() { pool.MatMul(make([]float32, 7), w, make([]float32, 128), 2) })
	bad := *w
	bad.Data = bad.Data[:len(bad.Data)-1]
	mustPanic(t, "short data", func() { pool.MatMul(make([]float32, 4), &bad, make([]float32, 64), 1) })
}

func TestMatrixValidate(t *testing.T) {
	ok := Matrix{Type: gguf.TypeQ4_K, Rows: 2, Cols: 256, Data: make([]byte, 2*144)}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid matrix: %v", err)
	}
	for _, tc := range []struct {
		name string
		m    Matrix
	}{
		{"unsupported type", Matrix{Type: gguf.TypeIQ2_XXS, Rows: 1, Cols: 256, Data: make([]byte, 66)}},
		{"unknown type", Matrix{Type: gguf.Type(99), Rows: 1, Cols: 32, Data: make([]byte, 64)}},
		{"partial block", Matrix{Type: gguf.TypeQ4_K, Rows: 1, Cols: 128, Data: make([]byte, 144)}},
		{"short data", Matrix{Type: gguf.TypeQ4_K, Rows: 2, Cols: 256, Data: make([]byte, 287)}},
		{"zero rows", Matrix{Type: gguf.TypeF32, Rows: 0, Cols: 4, Data: nil}},
	} {
		if err := tc.m.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", tc.name, tc.m.Type)
		}
	}
}

// TestMatrixRow: Row equals quant's dequantization for every type.
func TestMatrixRow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range testTypes {
		w := randMatrix(r, typ, 5, 2*max(32, typ.BlockSize()))
		got := make([]float32, w.Cols+3)
		for row := 0; row < w.Rows; row++ {
			w.Row(row, got)
			want := refRow(w, row)
			for i, v := range want {
				if float64(got[i]) != v {
					t.Fatalf("%s row %d [%d] = %g, want %g", typ, row, i, got[i], v)
				}
			}
		}
		mustPanic(t, "row out of range", func() { w.Row(w.Rows, got) })
		mustPanic(t, "short dst", func() { w.Row(0, got[:w.Cols-1]) })
	}
}

func TestMatMulAllocs(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	r := rand.New(rand.NewPCG(9, 10))
	for _, typ := range []gguf.Type{gguf.TypeF32, gguf.TypeQ4_0, gguf.TypeQ6_K} {
		w := randMatrix(r, typ, 512, 512)
		for _, m := range []int{1, 8} {
			x := randFloats(r, m*w.Cols, 1)
			dst := make([]float32, m*w.Rows)
			pool.MatMul(dst, w, x, m) // grow scratch
			if a := testing.AllocsPerRun(20, func() { pool.MatMul(dst, w, x, m) }); a != 0 {
				t.Errorf("%s m=%d: %v allocations per MatMul", typ, m, a)
			}
		}
	}
}

// TestMatMuls: several matrices over the same activations give, bit for
// bit, what separate MatMul calls give, including mixed weight types that
// need different activation conversions.
func TestMatMuls(t *testing.T) {
	pool := NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(41, 42))
	const cols = 512
	for _, types := range [][]gguf.Type{
		{gguf.TypeQ4_K, gguf.TypeQ4_K, gguf.TypeQ6_K}, // one conversion shared by all
		{gguf.TypeQ8_0, gguf.TypeF32, gguf.TypeQ4_K, gguf.TypeF16, gguf.TypeQ4_0},
	} {
		for _, m := range []int{1, 5, 16} {
			x := randFloats(r, m*cols, 1)
			ops := make([]MatMulOp, len(types))
			for j, typ := range types {
				w := randMatrix(r, typ, 64+37*j, cols)
				ops[j] = MatMulOp{Dst: make([]float32, m*w.Rows), W: w}
			}
			pool.MatMuls(x, m, ops)
			for j, op := range ops {
				want := make([]float32, len(op.Dst))
				pool.MatMul(want, op.W, x, m)
				for i, v := range want {
					if math.Float32bits(op.Dst[i]) != math.Float32bits(v) {
						t.Fatalf("%v m=%d: op %d (%s) [%d] = %g, MatMul gives %g", types, m, j, op.W.Type, i, op.Dst[i], v)
					}
				}
			}
			if a := testing.AllocsPerRun(10, func() { pool.MatMuls(x, m, ops) }); a != 0 {
				t.Errorf("%v m=%d: %v allocations per MatMuls", types, m, a)
			}
		}
	}
	w1 := randMatrix(r, gguf.TypeF32, 4, 64)
	w2 := randMatrix(r, gguf.TypeF32, 4, 32)
	mustPanic(t, "different Cols", func() {
		pool.MatMuls(make([]float32, 64), 1, []MatMulOp{{make([]float32, 4), w1}, {make([]float32, 4), w2}})
	})
}

// BenchmarkMatMulDecodeDRAM measures decode (m = 1) bandwidth on weights
// that do not fit in the caches: 12 matrices of 4096x2048 (107 MB of Q8_0,
// 57 MB of Q4_0/Q4_K) multiplied in turn, as a decode step walks its layers.
// GB/s counts weight bytes; compare with the machine's read bandwidth.
//
//	go test ./kernels -run '^$' -bench MatMulDecodeDRAM -cpu 1,2
func BenchmarkMatMulDecodeDRAM(b *testing.B) {
	r := rand.New(rand.NewPCG(51, 52))
	pool := NewPool(runtime.GOMAXPROCS(0))
	defer pool.Close()
	for _, typ := range []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		b.Run(typ.String(), func(b *testing.B) {
			one := randMatrix(r, typ, 4096, 2048)
			ws := make([]*Matrix, 12)
			bytes := 0
			for i := range ws {
				m := *one
				m.Data = append([]byte(nil), one.Data...) // distinct memory per matrix
				ws[i] = &m
				bytes += len(m.Data)
			}
			x, dst := randFloats(r, 2048, 1), make([]float32, 4096)
			for _, w := range ws {
				pool.MatMul(dst, w, x, 1)
			}
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			b.ResetTimer()
			for b.Loop() {
				for _, w := range ws {
					pool.MatMul(dst, w, x, 1)
				}
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			// Process CPU time per step (a shared machine's load stretches
			// wall time far more; stalls on DRAM still count).
			cpu := ru1.Utime.Nano() - ru0.Utime.Nano() + ru1.Stime.Nano() - ru0.Stime.Nano()
			b.ReportMetric(float64(cpu)/1e3/float64(b.N), "cpu-us/op")
		})
	}
}

// TestMatMulPrefetchNext: single-row MatMuls learn which matrix follows
// which (the order of a decode step), and prefetching never changes a
// result.
func TestMatMulPrefetchNext(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	r := rand.New(rand.NewPCG(53, 54))
	ws := []*Matrix{randMatrix(r, gguf.TypeQ4_0, 256, 512), randMatrix(r, gguf.TypeQ8_0, 512, 512), randMatrix(r, gguf.TypeF16, 128, 512)}
	x := randFloats(r, 512, 1)
	want := make([][]float32, len(ws))
	for i, w := range ws {
		want[i] = make([]float32, w.Rows)
		pool.MatMul(want[i], w, x, 1)
	}
	for rep := 0; rep < 3; rep++ {
		for i, w := range ws {
			got := make([]float32, w.Rows)
			pool.MatMul(got, w, x, 1)
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(want[i][k]) {
					t.Fatalf("rep %d matrix %d [%d]: %g, first call %g", rep, i, k, got[k], want[i][k])
				}
			}
		}
	}
	next := pool.scratch.mmNext
	for i, w := range ws {
		if got := next[w]; got != ws[(i+1)%len(ws)] {
			t.Errorf("matrix %d: learned successor %p, want %p", i, got, ws[(i+1)%len(ws)])
		}
	}
}

// BenchmarkReadBandwidth is the decode roofline BenchmarkMatMulDecodeDRAM
// compares with: GOMAXPROCS goroutines each stream their own part of
// 1 GiB (simd.Max over float32, one AVX load per 32/64 bytes and
// almost no arithmetic), GB/s of bytes read.
//
//	go test ./kernels -run '^$' -bench ReadBandwidth -cpu 1,2
func BenchmarkReadBandwidth(b *testing.B) {
	const total = 1 << 30
	buf := make([]float32, total/4)
	for i := range buf {
		buf[i] = float32(i & 1023)
	}
	t := runtime.GOMAXPROCS(0)
	part := len(buf) / t
	var sink [64]float32
	run := func() {
		var wg sync.WaitGroup
		for k := range t {
			wg.Go(func() { sink[k] = simd.Max(buf[k*part : (k+1)*part]) })
		}
		wg.Wait()
	}
	run()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}
