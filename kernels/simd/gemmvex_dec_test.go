package simd

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// The decode (m = 1) paths of every kernel set: the Q8_0 and Q6_K
// single-row dots, the Q4_K gemv over raw rows and over the load-time
// layout, and Q6_K's m = 1 GEMM (its single-row dots), each checked bit
// for bit against the generic reference under every set this CPU runs
// (the avxvnni set's kernels are gemmvex_dec_amd64.go's), and the AVX-VNNI
// kernels directly against the AVX2 ones they replace.

// decModes are genRow's modes plus two adversarial ones:
//
//	worst: the largest integer sums: nibbles 15, 6-bit quants 63, Q4_K
//	       scales and mins 63, Q6_K scales -128, int8 quants -128
//	signs: every byte one of the extreme values of its field
var decModes = append(append([]string{}, modes...), "worst", "signs")

// decRow returns nb blocks of format f in a decModes mode.
func decRow(r *rand.Rand, f format, nb int, mode string) []byte {
	if mode != "worst" && mode != "signs" {
		return genRow(r, f, nb, mode)
	}
	out := genRow(r, f, nb, "random")
	for i := range nb {
		b := out[i*f.bytes : (i+1)*f.bytes]
		pack, i8, sc := b[f.packLo:f.packHi], b[f.i8Lo:f.i8Hi], b[f.scLo:f.scHi]
		if mode == "worst" {
			fill(pack, 0xff)
			fill(i8, 0x80)
			if f.name == "Q6_K" {
				fill(sc, 0x80)
			} else {
				fill(sc, 0xff)
			}
		} else {
			for j := range pack {
				pack[j] = [6]byte{0x00, 0x0f, 0xf0, 0xff, 0x80, 0x7f}[r.IntN(6)]
			}
			for j := range i8 {
				i8[j] = [6]byte{0x80, 0x81, 0xff, 0x00, 0x01, 0x7f}[r.IntN(6)]
			}
			for j := range sc {
				sc[j] = [6]byte{0x00, 0x3f, 0x7f, 0x80, 0xc0, 0xff}[r.IntN(6)]
			}
		}
		if f.name == "Q8_K" { // bsums of the new quants
			for s := range 16 {
				var sum int32
				for _, q := range b[4+16*s : 20+16*s] {
					sum += int32(int8(q))
				}
				binary.LittleEndian.PutUint16(b[260+2*s:], uint16(int16(sum)))
			}
		}
	}
	return out
}

// decCase is one decode path: rows weight rows of nb blocks (wStride
// bytes apart) against one activation row, written to out.
type decCase struct {
	name    string
	w, x    string // formats
	generic func(nb int, w, x []byte) float32
	run     func(nb int, w []byte, wStride, rows int, x []byte, out []float32)
	rows    []int
}

var decCases = []decCase{
	{"DotQ8_0Q8_0", "Q8_0", "Q8_0", dotQ8_0Q8_0Generic, func(nb int, w []byte, wStride, rows int, x []byte, out []float32) {
		for i := range rows {
			out[i] = DotQ8_0Q8_0(nb*qk, w[i*wStride:], x)
		}
	}, []int{1, 3}},
	{"DotQ6_KQ8_K", "Q6_K", "Q8_K", dotQ6_KQ8_KGeneric, func(nb int, w []byte, wStride, rows int, x []byte, out []float32) {
		for i := range rows {
			out[i] = DotQ6_KQ8_K(nb*qkK, w[i*wStride:], x)
		}
	}, []int{1, 3}},
	{"GemmQ6_KQ8_K", "Q6_K", "Q8_K", dotQ6_KQ8_KGeneric, func(nb int, w []byte, wStride, rows int, x []byte, out []float32) {
		GemmQ6_KQ8_K(nb*qkK, w, wStride, rows, x, len(x), 1, out, rows, make([]byte, GemmScratchBytes(nb*qkK)))
	}, []int{5, 16}},
	{"GemmQ4_KQ8_K", "Q4_K", "Q8_K", dotQ4_KQ8_KGeneric, func(nb int, w []byte, wStride, rows int, x []byte, out []float32) {
		GemmQ4_KQ8_K(nb*qkK, w, wStride, rows, x, len(x), 1, out, rows, make([]byte, GemmScratchBytes(nb*qkK)))
	}, []int{1, 3, 8, 13, 16, 40}},
	{"GemmQ4_KPacked", "Q4_K", "Q8_K", dotQ4_KQ8_KGeneric, func(nb int, w []byte, wStride, rows int, x []byte, out []float32) {
		n := nb * qkK
		panels := make([]byte, PackedQ4_KBytes(n, rows))
		PackQ4_K(n, w, wStride, rows, panels)
		GemmQ4_KPacked(n, panels, rows, x, len(x), 1, out, rows, make([]byte, GemmScratchBytes(n)))
	}, []int{8, 16, 40}},
}

// decInput is one decode problem with the generic reference's outputs.
type decInput struct {
	nb, rows, wStride int
	w, x              []byte
	want              []float32
	desc              string
}

func decInputs(r *rand.Rand, c decCase) []decInput {
	fw, fx := formats[c.w], formats[c.x]
	var ins []decInput
	for _, mode := range decModes {
		for _, nb := range blockCounts(fw.block) {
			for _, rows := range c.rows {
				in := decInput{nb: nb, rows: rows, wStride: nb*fw.bytes + 7, x: decRow(r, fx, nb, mode)}
				in.w = make([]byte, rows*in.wStride)
				for i := range rows {
					copy(in.w[i*in.wStride:], decRow(r, fw, nb, mode))
				}
				in.want = make([]float32, rows)
				for i := range rows {
					in.want[i] = c.generic(nb, in.w[i*in.wStride:], in.x)
				}
				in.desc = fmt.Sprintf("%s nb=%d rows=%d", mode, nb, rows)
				ins = append(ins, in)
			}
		}
	}
	return ins
}

// check runs in under the current set and reports outputs that differ
// from the reference in bits.
func (in *decInput) check(c decCase) error {
	out := make([]float32, in.rows)
	for i := range out {
		out[i] = float32(math.NaN())
	}
	c.run(in.nb, in.w, in.wStride, in.rows, in.x, out)
	for i, v := range out {
		if math.Float32bits(v) != math.Float32bits(in.want[i]) {
			return fmt.Errorf("%s %s: out[%d] = %g (%#08x), generic %g (%#08x)", c.name, in.desc, i, v, math.Float32bits(v), in.want[i], math.Float32bits(in.want[i]))
		}
	}
	return nil
}

// TestDecodeSameBits: every decode path, under every kernel set, on one
// goroutine and on four at once (each with its own inputs), has the
// generic reference's bits, for all block counts and modes.
func TestDecodeSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, c := range decCases {
		ins := decInputs(r, c)
		bothImpls(t, func(t *testing.T, impl string) {
			for i := range ins {
				if err := ins[i].check(c); err != nil {
					t.Fatalf("%s, 1 goroutine: %v", impl, err)
				}
			}
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for g := range errs {
				wg.Go(func() {
					for i := g; i < len(ins); i += len(errs) {
						if err := ins[i].check(c); err != nil && errs[g] == nil {
							errs[g] = err
						}
					}
				})
			}
			wg.Wait()
			for g, err := range errs {
				if err != nil {
					t.Fatalf("%s, goroutine %d of %d: %v", impl, g, len(errs), err)
				}
			}
		})
	}
}

// TestVEXDecodeKernelsMatchAVX2 calls the avxvnni set's decode kernels
// directly, so that they are checked whatever the dispatch, against the
// AVX2 kernels they replace: the same bits for every mode and block
// count, 8 rows per gemv call (raw rows and the load-time layout).
func TestVEXDecodeKernelsMatchAVX2(t *testing.T) {
	if !cpuSets[implAVXVNNI] {
		t.Skipf("this CPU cannot run the avxvnni kernels: they need %s; it has %s", implNeeds[implAVXVNNI], CPUFeatures())
	}
	r := rand.New(rand.NewPCG(63, 64))
	same := func(what string, got, want float32) {
		t.Helper()
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("%s: avxvnni %g (%#08x), AVX2 %g (%#08x)", what, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for _, mode := range decModes {
		for _, nb := range blockCounts(qk) {
			w, x := decRow(r, formats["Q8_0"], nb, mode), decRow(r, formats["Q8_0"], nb, mode)
			same(fmt.Sprintf("Q8_0 %s nb=%d", mode, nb), dotQ8_0XQ8_0(nb, w, x), dotQ8_0Q8_0AVX2(nb, w, x))
		}
		for _, nb := range blockCounts(qkK) {
			x := decRow(r, formats["Q8_K"], nb, mode)
			w6 := decRow(r, formats["Q6_K"], nb, mode)
			same(fmt.Sprintf("Q6_K %s nb=%d", mode, nb), dotQ6_KXQ8_K(nb, w6, x), dotQ6_KQ8_KAVX2(nb, w6, x))
			stride := nb*bytesQ4_K + 5
			w4 := make([]byte, 8*stride)
			for i := range 8 {
				copy(w4[i*stride:], decRow(r, formats["Q4_K"], nb, mode))
			}
			panel := make([]byte, PackedQ4_KBytes(nb*qkK, 8))
			PackQ4_K(nb*qkK, w4, stride, 8, panel)
			var got, want [8]float32
			gemvQ4_KXQ8_KI(nb, &panel[0], bytesQ4_K, &x[0], &got[0])
			gemvQ4_KQ8_KI(nb, &panel[0], bytesQ4_K, &x[0], &want[0])
			for i := range 8 {
				same(fmt.Sprintf("Q4_K gemv (load-time layout) %s nb=%d row %d", mode, nb, i), got[i], want[i])
			}
		}
	}
}
