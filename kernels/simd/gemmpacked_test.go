package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// packedCases are the load-time layouts with their GEMM case (the
// per-call GEMM they must match), pack, panel rows and packed GEMM.
var packedCases = []struct {
	c      gemmCase
	rows   int
	pack   func(n int, w []byte, wStride, rows int, dst []byte)
	bytes  func(n, rows int) int
	packed func(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte)
	single func(nb int, w, x []byte) float32 // the generic single-row dot
}{
	{gemmCases[0], 8, PackQ8_0, PackedQ8_0Bytes, GemmQ8_0Packed, dotQ8_0Q8_0Generic},
	{gemmCases[1], 16, PackQ4_0, PackedQ4_0Bytes, GemmQ4_0Packed, dotQ4_0Q8_0Generic},
	{gemmCases[2], 8, PackQ4_K, PackedQ4_KBytes, GemmQ4_KPacked, dotQ4_KQ8_KGeneric},
}

// TestGemmPackedMatchesSingleRow checks the load-time panels against the
// generic single-row dot of the raw rows, bit for bit, on both
// implementations: every input mode (adversarial scales and quants), block
// counts around the Q8_0 kernels' 16-block chunks, one to five panels, m =
// 1..19 (decode kernel and every row group), output strides wider than
// the rows.
func TestGemmPackedMatchesSingleRow(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	for _, pc := range packedCases {
		for _, mode := range modes {
			for _, nb := range []int{1, 3, 16, 17, 40} {
				for _, sh := range [][2]int{{1, 1}, {2, 2}, {3, 3}, {1, 4}, {5, 5}, {2, 9}, {1, 8}, {2, 13}, {1, 19}} {
					rows, m := sh[0]*pc.rows, sh[1]
					if pc.c.w == "Q4_K" && nb > 3 && mode != "random" {
						continue // 256-element blocks: keep the test fast
					}
					w, wStride, x, a, aStride := gemmInputs(r, pc.c, nb, rows, m, mode)
					n := nb * formats[pc.c.w].block
					panels := make([]byte, pc.bytes(n, rows))
					pc.pack(n, w, wStride, rows, panels)
					outStride := rows + 3
					bothImpls(t, func(t *testing.T, impl string) {
						out := make([]float32, m*outStride)
						for i := range out {
							out[i] = 12345 // the gaps must stay untouched
						}
						pc.packed(n, panels, rows, a, aStride, m, out, outStride, make([]byte, GemmScratchBytes(n)))
						for j := range m {
							for i := range outStride {
								got := out[j*outStride+i]
								if i >= rows {
									if got != 12345 {
										t.Fatalf("%s %s %s nb=%d rows=%d m=%d: wrote out[%d][%d] beyond the rows", pc.c.w, impl, mode, nb, rows, m, j, i)
									}
									continue
								}
								want := pc.single(nb, w[i*wStride:], x[j])
								if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
									t.Fatalf("%s %s %s nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), single-row dot %g (%#08x)",
										pc.c.w, impl, mode, nb, rows, m, j, i, got, math.Float32bits(got), want, math.Float32bits(want))
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestPackQ8_0Layout pins the panel layout byte by byte on a small matrix
// (GemmQ8_0Packed's generic path reads it the same way, so a layout bug
// common to both would pass the bit test above), as the assembly and the
// generic packer write it.
func TestPackQ8_0Layout(t *testing.T) {
	const nb, rows = 5, 24
	w := make([]byte, rows*nb*bytesQ8_0)
	for i := range w {
		w[i] = byte(i * 31)
	}
	panels := make([]byte, PackedQ8_0Bytes(nb*qk, rows))
	if len(panels) != len(w) {
		t.Fatalf("panels are %d bytes, raw rows %d: the layout should add nothing", len(panels), len(w))
	}
	bothImpls(t, func(t *testing.T, impl string) {
		clear(panels)
		PackQ8_0(nb*qk, w, nb*bytesQ8_0, rows, panels)
		checkPackQ8_0(t, w, panels, nb, rows)
	})
}

func checkPackQ8_0(t *testing.T, w, panels []byte, nb, rows int) {
	for row := range rows {
		for b := range nb {
			src := w[(row*nb+b)*bytesQ8_0:]
			blk := panels[((row/8)*nb+b)*packedQ8_0Block:]
			r := row % 8
			if blk[256+2*r] != src[0] || blk[257+2*r] != src[1] {
				t.Fatalf("row %d block %d: scale bytes differ", row, b)
			}
			for k := range qk {
				if got, want := blk[32*(k/4)+4*r+k%4], src[2+k]; got != want {
					t.Fatalf("row %d block %d quant %d: panel has %#x, row %#x", row, b, k, got, want)
				}
			}
		}
	}
}

// TestPackQ4_0Layout pins the Q4_0 panel layout nibble by nibble.
func TestPackQ4_0Layout(t *testing.T) {
	const nb, rows = 2, 32
	w := make([]byte, rows*nb*bytesQ4_0)
	for i := range w {
		w[i] = byte(i*37 + 5)
	}
	panels := make([]byte, PackedQ4_0Bytes(nb*qk, rows))
	if len(panels) != len(w) {
		t.Fatalf("panels are %d bytes, raw rows %d: the layout should add nothing", len(panels), len(w))
	}
	PackQ4_0(nb*qk, w, nb*bytesQ4_0, rows, panels)
	for row := range rows {
		for b := range nb {
			src := w[(row*nb+b)*bytesQ4_0:]
			blk := panels[((row/16)*nb+b)*16*bytesQ4_0:]
			r := row % 16
			if blk[256+2*r] != src[0] || blk[257+2*r] != src[1] {
				t.Fatalf("row %d block %d: scale bytes differ", row, b)
			}
			for e := range qk {
				want := src[2+e%16] >> (4 * (e / 16)) & 15
				got := blk[32*(e/4)+4*(r%8)+e%4] >> (4 * (r / 8)) & 15
				if got != want {
					t.Fatalf("row %d block %d element %d: panel has %d, row %d", row, b, e, got, want)
				}
			}
		}
	}
}

// TestGemmQ8_0PackedBadArgs: shapes the panels cannot hold panic with a
// message naming the problem.
func TestGemmQ8_0PackedBadArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"rows not a multiple of 8", func() { PackQ8_0(32, make([]byte, 340), 34, 10, make([]byte, 1000)) }},
		{"short dst", func() { PackQ8_0(32, make([]byte, 8*34), 34, 8, make([]byte, 100)) }},
		{"short panels", func() {
			GemmQ8_0Packed(32, make([]byte, 100), 8, make([]byte, 36), 36, 1, make([]float32, 8), 8, make([]byte, GemmScratchBytes(32)))
		}},
		{"n not blocks", func() { GemmQ8_0Packed(33, nil, 8, nil, 0, 1, nil, 8, nil) }},
		{"Q4_0 rows not a multiple of 16", func() { PackQ4_0(32, make([]byte, 8*18), 18, 8, make([]byte, 1000)) }},
		{"Q4_0 short panels", func() {
			GemmQ4_0Packed(32, make([]byte, 100), 16, make([]byte, 40), 40, 1, make([]float32, 16), 16, make([]byte, GemmScratchBytes(32)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if e := recover(); e == nil {
					t.Fatal("no panic")
				} else if s := fmt.Sprint(e); len(s) < 20 {
					t.Fatalf("panic message %q says too little", s)
				}
			}()
			tc.f()
		})
	}
}

// BenchmarkGemmPacked times the load-time-panel GEMMs (m = 1 is decode)
// under every kernel set, for comparison with each other and with the
// per-call panels (BenchmarkGemm).
func BenchmarkGemmPacked(b *testing.B) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, pc := range packedCases {
		for _, n := range []int{2048, 5632} {
			for _, m := range []int{1, 4, 16, 128} {
				nb, rows := n/formats[pc.c.w].block, 64
				w, wStride, _, a, aStride := gemmInputs(r, pc.c, nb, rows, m, "random")
				panels := make([]byte, pc.bytes(n, rows))
				pc.pack(n, w, wStride, rows, panels)
				out, scratch := make([]float32, m*rows), make([]byte, GemmScratchBytes(n))
				b.Run(fmt.Sprintf("%s/n=%d/m=%d", pc.c.w, n, m), func(b *testing.B) {
					benchImpls(b, func(b *testing.B) {
						b.SetBytes(int64(m * rows * wStride))
						for b.Loop() {
							pc.packed(n, panels, rows, a, aStride, m, out, rows, scratch)
						}
						b.ReportMetric(float64(rows*m*n/32)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "outblk/ns")
					})
				})
			}
		}
	}
}
