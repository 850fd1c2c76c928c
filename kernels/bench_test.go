package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"kiln/gguf"
)

// BenchmarkMatMul measures MatMul on TinyLlama-1.1B shapes (q/o: 2048x2048,
// gate/up: 5632x2048, down: 2048x5632) for m = 1 (decode), 16 (batched
// decode) and 128 (prefill). Metrics: tok/s = activation rows per second,
// GB/s = weight bytes streamed per second (each weight byte is read once
// per call).
//
//	go test ./kernels -run '^$' -bench 'MatMul/Q4_0' -benchtime 20x -cpu 1,2
func BenchmarkMatMul(b *testing.B) {
	r := rand.New(rand.NewPCG(31, 32))
	pool := NewPool(runtime.GOMAXPROCS(0)) // -cpu 1,2 picks the thread count
	defer pool.Close()
	types := []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_0,
		gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K}
	shapes := []struct{ rows, cols int }{{2048, 2048}, {5632, 2048}, {2048, 5632}}
	for _, typ := range types {
		for _, sh := range shapes {
			var w *Matrix  // built on first use: filtered-out cases cost nothing
			var rp *Matrix // w repacked (Repack), for the types that have a load-time layout
			for _, m := range []int{1, 4, 16, 128} {
				b.Run(fmt.Sprintf("%s/%dx%d/m=%d", typ, sh.rows, sh.cols, m), func(b *testing.B) {
					if w == nil {
						w = randMatrix(r, typ, sh.rows, sh.cols)
					}
					benchMatMul(b, pool, r, w, m)
				})
				if !Repackable(&Matrix{Type: typ, Rows: sh.rows, Cols: sh.cols}) {
					continue
				}
				b.Run(fmt.Sprintf("%s-repacked/%dx%d/m=%d", typ, sh.rows, sh.cols, m), func(b *testing.B) {
					if rp == nil {
						if w == nil {
							w = randMatrix(r, typ, sh.rows, sh.cols)
						}
						c := *w
						if err := pool.Repack(&c); err != nil {
							b.Fatal(err)
						}
						rp = &c
					}
					benchMatMul(b, pool, r, rp, m)
				})
			}
			if rp != nil {
				Unpack(rp)
			}
		}
	}
}

// benchMatMul times pool.MatMul of w by m random activation rows.
func benchMatMul(b *testing.B, pool *Pool, r *rand.Rand, w *Matrix, m int) {
	x := randFloats(r, m*w.Cols, 1)
	dst := make([]float32, m*w.Rows)
	pool.MatMul(dst, w, x, m)
	b.ResetTimer()
	for b.Loop() {
		pool.MatMul(dst, w, x, m)
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(m)/sec, "tok/s")
	b.ReportMetric(float64(len(w.Data))/sec/1e9, "GB/s")
}

// BenchmarkAttention measures one decode step of 1 and 16 sequences at
// context 512 with TinyLlama's attention shape (32 query heads, 4 KV heads,
// head size 64, F16 cache), and a 128-token prefill chunk at 384..511.
func BenchmarkAttention(b *testing.B) {
	pool := NewPool(runtime.GOMAXPROCS(0)) // -cpu 1,2 picks the thread count
	defer pool.Close()
	for _, bc := range []struct {
		name string
		seqs []seqSpec
	}{
		{"decode/seqs=1/ctx=512", []seqSpec{{511, 512}}},
		{"decode/seqs=16/ctx=512", func() []seqSpec {
			s := make([]seqSpec, 16)
			for i := range s {
				s[i] = seqSpec{511, 512}
			}
			return s
		}()},
		{"prefill/tokens=128/ctx=512", []seqSpec{{384, 512}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := newAttnCase(rand.New(rand.NewPCG(33, 34)), true, 32, 4, 64, 16, bc.seqs)
			if err := pool.Attention(c.kv, c.batch); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				_ = pool.Attention(c.kv, c.batch)
			}
			b.ReportMetric(float64(len(c.batch.Positions))*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkAttentionKV measures one decode step of 16 sequences at context
// 2048 with SmolLM2-135M's attention shape (9 query heads, 3 KV heads,
// head size 64) over each cache type, and a 256-token prefill chunk at
// 1792..2047.
func BenchmarkAttentionKV(b *testing.B) {
	pool := NewPool(runtime.GOMAXPROCS(0))
	defer pool.Close()
	dec := make([]seqSpec, 16)
	for i := range dec {
		dec[i] = seqSpec{2047, 2048}
	}
	for _, typ := range []KVType{KVF16, KVQ8_0, KVQ4_0} {
		for _, bc := range []struct {
			name string
			seqs []seqSpec
		}{
			{"decode/seqs=16/ctx=2048", dec},
			{"prefill/tokens=256/ctx=2048", []seqSpec{{1792, 2048}}},
		} {
			b.Run(typ.String()+"/"+bc.name, func(b *testing.B) {
				c := newAttnCaseKV(rand.New(rand.NewPCG(33, 34)), typ, 9, 3, 64, 16, bc.seqs)
				if err := pool.Attention(c.kv, c.batch); err != nil {
					b.Fatal(err)
				}
				var ru0, ru1 syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
				b.ResetTimer()
				for b.Loop() {
					_ = pool.Attention(c.kv, c.batch)
				}
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
				b.ReportMetric(float64(len(c.batch.Positions))*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
				// Process CPU time per call: less sensitive than wall time to
				// other processes on a shared machine.
				cpu := time.Duration(ru1.Utime.Nano() - ru0.Utime.Nano() + ru1.Stime.Nano() - ru0.Stime.Nano())
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
			})
		}
	}
}
