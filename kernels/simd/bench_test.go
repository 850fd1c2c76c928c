package simd

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// Benchmarks report bytes/s of weights read (b.SetBytes: one weight row)
// for TinyLlama row lengths, with the generic code and the best
// implementation: go test -bench . ./kernels/simd

var benchSink float32

// benchImpls runs f under the generic code and, where present, the fast
// implementation, as sub-benchmarks named by the kernel set. Where the OS
// has a per-thread CPU clock they also report cpu-ns/op, the benchmark
// thread's CPU time per operation: on a machine shared with other jobs it
// leaves out the time the thread waited for a core, which ns/op counts
// (f must run its loop on the calling goroutine, as the benchmarks here
// do).
func benchImpls(b *testing.B, f func(b *testing.B)) {
	defer ForceGeneric(false)
	for _, name := range Impls() {
		if _, err := SetImpl(name); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c0, ok := threadCPUTime()
			f(b)
			if c1, ok1 := threadCPUTime(); ok && ok1 && b.N > 0 {
				b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

func BenchmarkDotQuant(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, q := range quantDots {
		fw, fx := formats[q.w], formats[q.x]
		for _, n := range []int{2048, 5632} {
			nb := n / fw.block
			w, x := genRow(r, fw, nb, "random"), genRow(r, fx, nb, "random")
			b.Run(fmt.Sprintf("%s/n=%d", q.w, n), func(b *testing.B) {
				benchImpls(b, func(b *testing.B) {
					b.SetBytes(int64(len(w)))
					for b.Loop() {
						benchSink += q.public(n, w, x)
					}
				})
			})
		}
	}
}

// BenchmarkDotQuantX4 times the one-weight-row, four-activation-row
// kernels. SetBytes counts the weight row once per activation row (as four
// single-row calls would read it), so MB/s compares directly with
// BenchmarkDotQuant: the ratio is the x4 kernel's speed-up.
func BenchmarkDotQuantX4(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, q := range x4Dots {
		fw, fx := formats[q.w], formats[q.x]
		for _, n := range []int{2048, 5632} {
			nb := n / fw.block
			w, x := genRow(r, fw, nb, "random"), genRow(r, fx, 4*nb, "random")
			var out [4]float32
			b.Run(fmt.Sprintf("%s/n=%d", q.w, n), func(b *testing.B) {
				benchImpls(b, func(b *testing.B) {
					b.SetBytes(int64(4 * len(w)))
					for b.Loop() {
						q.x4(n, w, x, nb*fx.bytes, &out)
					}
					benchSink += out[0]
				})
			})
		}
	}
}

func BenchmarkDotFloat(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{2048, 5632} {
		a, c := randF32(r, n, 1), randF32(r, n, 1)
		h, g := randF16(r, n, 1), randF16(r, n, 1)
		cases := []struct {
			name  string
			bytes int
			f     func() float32
		}{
			{"F32", 4 * n, func() float32 { return DotF32(a, c) }},
			{"F16", 2 * n, func() float32 { return DotF16(h, g) }},
			{"BF16", 2 * n, func() float32 { return DotBF16(h, g) }},
			{"F32F16", 2 * n, func() float32 { return DotF32F16(a, h) }},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
				benchImpls(b, func(b *testing.B) {
					b.SetBytes(int64(c.bytes))
					for b.Loop() {
						benchSink += c.f()
					}
				})
			})
		}
	}
}

// BenchmarkVec reports bytes/s of the main input (x, or src).
func BenchmarkVec(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	n := 2048
	x, y, dst := randF32(r, n, 1), randF32(r, n, 1), make([]float32, n)
	h, hdst := randF16(r, n, 1), make([]uint16, n)
	cases := []struct {
		name  string
		bytes int
		f     func()
	}{
		{"Axpy", 4 * n, func() { Axpy(1e-3, x, y) }},
		{"AxpyF16", 2 * n, func() { AxpyF16(1e-3, h, y) }},
		{"Scale", 4 * n, func() { Scale(1, x) }},
		{"Add", 4 * n, func() { Add(dst, x, y) }},
		{"Mul", 4 * n, func() { Mul(dst, x, y) }},
		{"SumSquares", 4 * n, func() { benchSink += SumSquares(x) }},
		{"Max", 4 * n, func() { benchSink += Max(x) }},
		{"F16ToF32Row", 2 * n, func() { F16ToF32Row(h, dst) }},
		{"F32ToF16Row", 4 * n, func() { F32ToF16Row(x, hdst) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			benchImpls(b, func(b *testing.B) {
				b.SetBytes(int64(c.bytes))
				for b.Loop() {
					c.f()
				}
			})
		})
	}
}

// BenchmarkGemmQ4_KPacked times a TinyLlama-sized Q4_K prefill GEMM
// (n = 2048, 256 rows, 128 activation rows) under the assembly kernel sets.
func BenchmarkGemmQ4_KPacked(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	const n, rows, m = 2048, 256, 128
	c := gemmCases[2]
	nb := n / qkK
	w, wStride, _, a, aStride := gemmInputs(r, c, nb, rows, m, "random")
	panels := make([]byte, PackedQ4_KBytes(n, rows))
	PackQ4_K(n, w, wStride, rows, panels)
	out := make([]float32, m*rows)
	scratch := make([]byte, GemmScratchBytes(n))
	defer ForceGeneric(false)
	for _, name := range Impls() {
		if name == "generic" {
			continue
		}
		if _, err := SetImpl(name); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				GemmQ4_KPacked(n, panels, rows, a, aStride, m, out, rows, scratch)
			}
		})
	}
}
