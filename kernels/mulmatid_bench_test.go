//go:build unix

package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"

	"kiln/gguf"
)

// BenchmarkMoEFFN: the expert part of one Qwen3-30B-A3B-shape MoE layer
// (dim 2048, expert FFN 768, 8 of 64 experts per row; 64 rather than 128
// experts keeps the setup short) for T rows, as model/moe.go ran it before
// MulMatID (per expert: MatMuls of gate and up over its gathered rows, the
// down MatMul) and with it (one MulMatID for gate and up over every group,
// one for down). On one thread, so that the process CPU time per op
// (cpu-ns/op, getrusage) measures the work on a machine shared with other
// load, where wall time does not. SwiGLU is left out (the same in both).
//
//	go test ./kernels/ -run X -bench MoEFFN -benchtime 20x
func BenchmarkMoEFFN(b *testing.B) {
	const D, F, E, k = 2048, 768, 64, 8
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ4_K} {
		r := rand.New(rand.NewPCG(7, 8))
		p := NewPool(1)
		gate, up, down := make([]*Matrix, E), make([]*Matrix, E), make([]*Matrix, E)
		for e := range E {
			gate[e], up[e], down[e] = randMatrix(r, typ, F, D), randMatrix(r, typ, F, D), randMatrix(r, typ, D, F)
			for _, w := range []*Matrix{gate[e], up[e], down[e]} {
				w.MulMatID = true
				if Repackable(w) {
					if err := p.Repack(w); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		for _, T := range []int{1, 128} {
			// Routing: row i takes k distinct experts, spread evenly.
			order := make([][]int32, E) // rows of each expert
			for i := range T {
				for _, e := range r.Perm(E)[:k] {
					order[e] = append(order[e], int32(i))
				}
			}
			x := randFloats(r, T*D, 1)
			gt, ut, out := make([]float32, T*k*F), make([]float32, T*k*F), make([]float32, T*k*D)
			gx := make([]float32, T*k*D)
			run := map[string]func(){
				"per-expert": func() {
					a := 0
					for e := range E {
						g := order[e]
						n := len(g)
						if n == 0 {
							continue
						}
						for j, row := range g {
							copy(gx[j*D:(j+1)*D], x[int(row)*D:(int(row)+1)*D])
						}
						ops := []MatMulOp{{Dst: gt[a*F : (a+n)*F], W: gate[e]}, {Dst: ut[a*F : (a+n)*F], W: up[e]}}
						p.MatMuls(gx[:n*D], n, ops)
						p.MatMul(out[a*D:(a+n)*D], down[e], gt[a*F:(a+n)*F], n)
						a += n
					}
				},
				"grouped": func() {
					var ops []ExpertOp
					a := 0
					for e := range E {
						g := order[e]
						if len(g) == 0 {
							continue
						}
						ops = append(ops, ExpertOp{Dst: gt[a*F : (a+len(g))*F], W: gate[e], Rows: g},
							ExpertOp{Dst: ut[a*F : (a+len(g))*F], W: up[e], Rows: g})
						a += len(g)
					}
					p.MulMatID(x, T, ops)
					ops = ops[:0]
					a = 0
					for e := range E {
						if n := len(order[e]); n > 0 {
							ops = append(ops, ExpertOp{Dst: out[a*D : (a+n)*D], W: down[e], First: a, N: n})
							a += n
						}
					}
					p.MulMatID(gt, T*k, ops)
				},
			}
			for _, name := range []string{"per-expert", "grouped"} {
				f := run[name]
				b.Run(fmt.Sprintf("%s/T=%d/%s", typ, T, name), func(b *testing.B) {
					f()
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					c0 := cpuNs()
					b.ResetTimer()
					for range b.N {
						f()
					}
					b.ReportMetric(float64(cpuNs()-c0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
		Unpack(append(append(gate, up...), down...)...)
		p.Close()
	}
}

// cpuNs is the process's user+system CPU time in ns.
func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
