package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"kiln/gguf"
)

// TestRepackMatchesRaw: a repacked Q8_0, Q4_0 or Q4_K matrix gives, bit for bit, what
// its raw rows give, for decode and batches (every kernel row group), on 1
// and several threads, including a last partial panel (Rows%8) and, in
// MatMuls, matrices whose rows start mid-panel in the combined row space
// (so that workers' chunks split panels).
func TestRepackMatchesRaw(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	pools := []*Pool{NewPool(1), NewPool(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, tc := range []struct {
		typ   gguf.Type
		shape [2]int
	}{
		{gguf.TypeQ8_0, [2]int{8, 32}}, {gguf.TypeQ8_0, [2]int{21, 64}}, {gguf.TypeQ8_0, [2]int{133, 256}}, {gguf.TypeQ8_0, [2]int{512, 512}},
		{gguf.TypeQ4_0, [2]int{16, 32}}, {gguf.TypeQ4_0, [2]int{40, 64}}, {gguf.TypeQ4_0, [2]int{512, 512}},
		{gguf.TypeQ4_K, [2]int{8, 256}}, {gguf.TypeQ4_K, [2]int{72, 512}}, {gguf.TypeQ4_K, [2]int{256, 1024}},
	} {
		shape := tc.shape
		raw := randMatrix(r, tc.typ, shape[0], shape[1])
		rp := *raw
		if err := pools[1].Repack(&rp); err != nil {
			t.Fatal(err)
		}
		if !rp.Repacked() || raw.Repacked() {
			t.Fatalf("%v: Repacked() = %v on the copy, %v on the original", shape, rp.Repacked(), raw.Repacked())
		}
		for _, m := range []int{1, 2, 3, 4, 5, 17} { // 2, 3: below Q4_K's GEMM threshold
			x := randFloats(r, m*raw.Cols, 1)
			want := make([]float32, m*raw.Rows)
			pools[0].MatMul(want, raw, x, m)
			for _, p := range pools {
				got := make([]float32, m*raw.Rows)
				p.MatMul(got, &rp, x, m)
				for i, v := range want {
					if math.Float32bits(got[i]) != math.Float32bits(v) {
						t.Fatalf("%s %v m=%d threads=%d: out[%d] = %g repacked, %g raw", tc.typ, shape, m, p.Threads(), i, got[i], v)
					}
				}
			}
		}
		Unpack(&rp)
		if rp.Repacked() {
			t.Fatal("Unpack left the panels")
		}
	}
	// MatMuls: a 13-row F32 matrix first puts the Q8_0 matrices' rows at
	// odd offsets of the combined row space.
	for _, m := range []int{1, 6} {
		const cols = 256
		x := randFloats(r, m*cols, 1)
		ws := []*Matrix{randMatrix(r, gguf.TypeF32, 13, cols), randMatrix(r, gguf.TypeQ8_0, 517, cols), randMatrix(r, gguf.TypeQ4_0, 72, cols),
			randMatrix(r, gguf.TypeQ4_K, 40, cols), randMatrix(r, gguf.TypeQ8_0, 64, cols)}
		rps := make([]*Matrix, len(ws))
		for j, w := range ws {
			c := *w
			rps[j] = &c
		}
		if err := pools[1].Repack(rps...); err != nil {
			t.Fatal(err)
		}
		ops := make([]MatMulOp, len(ws))
		for j, w := range rps {
			ops[j] = MatMulOp{Dst: make([]float32, m*w.Rows), W: w}
		}
		pools[1].MatMuls(x, m, ops)
		for j, w := range ws {
			want := make([]float32, m*w.Rows)
			pools[0].MatMul(want, w, x, m)
			for i, v := range want {
				if math.Float32bits(ops[j].Dst[i]) != math.Float32bits(v) {
					t.Fatalf("MatMuls m=%d: op %d out[%d] = %g repacked, %g raw", m, j, i, ops[j].Dst[i], v)
				}
			}
		}
		if a := testing.AllocsPerRun(10, func() { pools[1].MatMuls(x, m, ops) }); a != 0 {
			t.Errorf("m=%d: %v allocations per MatMuls over repacked matrices", m, a)
		}
		Unpack(rps...)
	}
}

// TestRepackable: only Q8_0, Q4_0 and Q4_K matrices of at least a panel's
// worth of rows (Q4_0, Q4_K: of llama.cpp's repacked shapes, Rows%8 == 0)
// get a load-time layout; Repack leaves the others alone.
func TestRepackable(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	pool := NewPool(2)
	defer pool.Close()
	for _, tc := range []struct {
		typ  gguf.Type
		rows int
		want bool
	}{
		{gguf.TypeQ8_0, 8, true}, {gguf.TypeQ8_0, 7, false}, {gguf.TypeQ4_0, 64, true}, {gguf.TypeQ4_0, 24, true},
		{gguf.TypeQ4_0, 8, false}, {gguf.TypeQ4_0, 36, false}, {gguf.TypeQ4_K, 64, true}, {gguf.TypeQ4_K, 12, false},
		{gguf.TypeQ6_K, 64, false}, {gguf.TypeF32, 64, false},
	} {
		w := randMatrix(r, tc.typ, tc.rows, 256)
		if got := Repackable(w); got != tc.want {
			t.Errorf("%s %d rows: Repackable = %v, want %v", tc.typ, tc.rows, got, tc.want)
		}
		if err := pool.Repack(w); err != nil {
			t.Fatal(err)
		}
		if w.Repacked() != tc.want {
			t.Errorf("%s %d rows: Repacked after Repack = %v", tc.typ, tc.rows, w.Repacked())
		}
		Unpack(w)
	}
}

// BenchmarkRepack measures load-time repacking of one TinyLlama FFN matrix
// (5632x2048) from memory already read: MB/s of raw weights.
func BenchmarkRepack(b *testing.B) {
	r := rand.New(rand.NewPCG(75, 76))
	pool := NewPool(0)
	defer pool.Close()
	for _, typ := range []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_0} {
		w := randMatrix(r, typ, 5632, 2048)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w.Data)))
			for b.Loop() {
				c := *w
				if err := pool.Repack(&c); err != nil {
					b.Fatal(err)
				}
				Unpack(&c)
			}
		})
	}
}
