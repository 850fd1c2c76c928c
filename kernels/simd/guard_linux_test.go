//go:build linux

package simd

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns a byte slice of length n whose last byte is followed by
// an inaccessible page and whose first byte is preceded by one (two
// separate mappings: one ending at a guard, one starting after a guard),
// so an assembly kernel reading one byte past either end faults.
type guardedBufs struct {
	mem  [][]byte
	page int
}

func newGuarded(t *testing.T) *guardedBufs {
	return &guardedBufs{page: syscall.Getpagesize()}
}

func (g *guardedBufs) alloc(t *testing.T, n int, atEnd bool) []byte {
	t.Helper()
	pages := (n+g.page-1)/g.page + 1
	m, err := syscall.Mmap(-1, 0, (pages+1)*g.page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	g.mem = append(g.mem, m)
	if atEnd {
		if err := syscall.Mprotect(m[pages*g.page:], syscall.PROT_NONE); err != nil {
			t.Fatalf("mprotect: %v", err)
		}
		return m[pages*g.page-n : pages*g.page : pages*g.page]
	}
	if err := syscall.Mprotect(m[:g.page], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	return m[g.page : g.page+n : g.page+n]
}

func (g *guardedBufs) free() {
	for _, m := range g.mem {
		syscall.Munmap(m)
	}
}

// TestNoReadsOutsideSlices runs every fast kernel on inputs that end at (or
// start at) an inaccessible page: a read past the slice would crash.
func TestNoReadsOutsideSlices(t *testing.T) {
	g := newGuarded(t)
	defer g.free()
	r := rand.New(rand.NewPCG(31, 32))
	for _, atEnd := range []bool{true, false} {
		for _, q := range quantDots {
			fw, fx := formats[q.w], formats[q.x]
			for _, nb := range []int{1, 2, 3, 4, 5, 7, 9} {
				w, x := g.alloc(t, nb*fw.bytes, atEnd), g.alloc(t, nb*fx.bytes, atEnd)
				copy(w, genRow(r, fw, nb, "random"))
				copy(x, genRow(r, fx, nb, "random"))
				want := q.generic(nb, w, x)
				if got := q.public(nb*fw.block, w, x); got != want {
					t.Errorf("%s nb=%d guarded: %g, generic %g", q.w, nb, got, want)
				}
			}
		}
		for _, q := range x4Dots {
			fw, fx := formats[q.w], formats[q.x]
			for _, nb := range []int{1, 2, 3} {
				w, x := g.alloc(t, nb*fw.bytes, atEnd), g.alloc(t, 4*nb*fx.bytes, atEnd)
				copy(w, genRow(r, fw, nb, "random"))
				copy(x, genRow(r, fx, 4*nb, "random"))
				var out [4]float32
				q.x4(nb*fw.block, w, x, nb*fx.bytes, &out)
				for k := range 4 {
					if want := q.single(nb*fw.block, w, x[k*nb*fx.bytes:]); out[k] != want {
						t.Errorf("%s x4 nb=%d guarded row %d: %g, single %g", q.w, nb, k, out[k], want)
					}
				}
			}
		}
		for n := 1; n <= 70; n++ {
			f := func(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n) }
			h := func(b []byte) []uint16 { return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n) }
			a, b, c := f(g.alloc(t, 4*n, atEnd)), f(g.alloc(t, 4*n, atEnd)), f(g.alloc(t, 4*n, atEnd))
			ha, hb := h(g.alloc(t, 2*n, atEnd)), h(g.alloc(t, 2*n, atEnd))
			copy(a, randF32(r, n, 1))
			copy(b, randF32(r, n, 1))
			copy(ha, randF16(r, n, 1))
			copy(hb, randF16(r, n, 1))
			benchSink += DotF32(a, b) + DotF16(ha, hb) + DotBF16(ha, hb) + DotF32F16(a, hb)
			if n%8 == 0 {
				benchSink += DotF32Lanes8(a, b) + DotF16Lanes8(ha, hb) + DotBF16Lanes8(ha, hb)
				// x4: four rows ending at the guard page, weight row too.
				x4 := f(g.alloc(t, 4*4*n, atEnd))
				h4 := h(g.alloc(t, 4*2*n, atEnd))
				x4 = unsafe.Slice(&x4[0], 4*n)
				h4 = unsafe.Slice(&h4[0], 4*n)
				copy(x4, randF32(r, 4*n, 1))
				copy(h4, randF16(r, 4*n, 1))
				var out [4]float32
				DotF32Lanes8x4(n, a, x4, n, &out)
				for k := range 4 {
					if want := DotF32Lanes8(a, x4[k*n:(k+1)*n]); out[k] != want {
						t.Errorf("DotF32Lanes8x4 n=%d guarded row %d: %g, single %g", n, k, out[k], want)
					}
				}
				DotF16Lanes8x4(n, ha, h4, n, &out)
				DotBF16Lanes8x4(n, ha, h4, n, &out)
			}
			benchSink += SumSquares(a) + Max(a)
			Axpy(0.5, a, b)
			AxpyF16(0.5, ha, b)
			Scale(0.5, b)
			Add(c, a, b)
			Mul(c, a, b)
			F16ToF32Row(ha, c)
			F32ToF16Row(a, hb)
		}
	}
}
