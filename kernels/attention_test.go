package kernels

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kiln/kernels/simd"
)

// attnCase builds a cache holding several sequences with scattered block
// tables, and a batch of new tokens for them (a mix of decode tokens and
// prefill chunks).
type attnCase struct {
	kv      *PagedKV
	batch   *AttnBatch
	history [][][]float32 // [seq][pos] K row as stored (after F16 rounding), [kvHeads*headDim]
	vals    [][][]float32 // same for V
}

// seqSpec: a sequence whose new tokens sit at positions [from, to).
type seqSpec struct{ from, to int }

func newAttnCase(r *rand.Rand, f16 bool, heads, kvHeads, headDim, blockSize int, seqs []seqSpec) *attnCase {
	return newAttnCaseKV(r, kvt(f16), heads, kvHeads, headDim, blockSize, seqs)
}

// newAttnCaseKV is newAttnCase over a cache of any type (history and vals
// hold the floats as given for the quantized types).
func newAttnCaseKV(r *rand.Rand, typ KVType, heads, kvHeads, headDim, blockSize int, seqs []seqSpec) *attnCase {
	f16 := typ == KVF16
	need := 0
	for _, s := range seqs {
		need += (s.to + blockSize - 1) / blockSize
	}
	numBlocks := need + 3
	kv := NewPagedKV(numBlocks, blockSize, kvHeads, headDim, typ)
	perm := r.Perm(numBlocks) // scattered, non-contiguous pages
	c := &attnCase{kv: kv, batch: &AttnBatch{Heads: heads}}
	w := kvHeads * headDim
	next := 0
	for _, s := range seqs {
		nb := (s.to + blockSize - 1) / blockSize
		table := make([]int32, nb)
		for j := range table {
			table[j] = int32(perm[next])
			next++
		}
		// Store all positions 0..to-1 (history and the new tokens), in two
		// calls as a real run would: history first, then this step's tokens.
		k := randFloats(r, s.to*w, 1)
		v := randFloats(r, s.to*w, 1)
		pos := make([]int32, s.to)
		for i := range pos {
			pos[i] = int32(i)
		}
		if err := kv.Store(table, pos[:s.from], k[:s.from*w], v[:s.from*w]); err != nil {
			panic(err)
		}
		if err := kv.Store(table, pos[s.from:], k[s.from*w:], v[s.from*w:]); err != nil {
			panic(err)
		}
		hk, hv := make([][]float32, s.to), make([][]float32, s.to)
		for p := 0; p < s.to; p++ {
			hk[p], hv[p] = k[p*w:(p+1)*w], v[p*w:(p+1)*w]
			if f16 {
				hk[p], hv[p] = roundF16(hk[p]), roundF16(hv[p])
			}
		}
		c.history = append(c.history, hk)
		c.vals = append(c.vals, hv)
		start := len(c.batch.Positions)
		c.batch.Positions = append(c.batch.Positions, pos[s.from:]...)
		c.batch.Seqs = append(c.batch.Seqs, AttnSeq{Start: start, End: len(c.batch.Positions), BlockTable: table})
	}
	n := len(c.batch.Positions)
	c.batch.Q = randFloats(r, n*heads*headDim, 1)
	c.batch.Out = make([]float32, n*heads*headDim)
	return c
}

func roundF16(x []float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = simd.F16ToF32(simd.F32ToF16(v))
	}
	return out
}

// reference computes naive softmax(q·Kᵀ·scale)·V in float64 for every token
// and head.
func (c *attnCase) reference() []float64 {
	b, kv := c.batch, c.kv
	hd, heads := kv.HeadDim, b.Heads
	group := heads / kv.KVHeads
	scale := 1 / math.Sqrt(float64(hd))
	out := make([]float64, len(b.Out))
	for si, s := range b.Seqs {
		for tok := s.Start; tok < s.End; tok++ {
			pos := int(b.Positions[tok])
			for h := 0; h < heads; h++ {
				g := h / group
				q := b.Q[(tok*heads+h)*hd : (tok*heads+h+1)*hd]
				scores := make([]float64, pos+1)
				mx := math.Inf(-1)
				for j := 0; j <= pos; j++ {
					k := c.history[si][j][g*hd : (g+1)*hd]
					var d float64
					for i := range q {
						d += float64(q[i]) * float64(k[i])
					}
					scores[j] = d * scale
					mx = math.Max(mx, scores[j])
				}
				var sum float64
				for j := range scores {
					scores[j] = math.Exp(scores[j] - mx)
					sum += scores[j]
				}
				o := out[(tok*heads+h)*hd : (tok*heads+h+1)*hd]
				for j, p := range scores {
					v := c.vals[si][j][g*hd : (g+1)*hd]
					for i := range o {
						o[i] += p / sum * float64(v[i])
					}
				}
			}
		}
	}
	return out
}

// tiledReference computes Attention's documented arithmetic (llama.cpp's
// tiled flash attention) plainly, one query row at a time with scalar
// float32 FMAs: tiles of 64 positions from 0, a fused dot per key, the
// running max and sum rescaled by expf, probabilities by exp32 summed 8 at
// a time in ggml's lane order, the output accumulated by fused multiply-adds.
func (c *attnCase) tiledReference() []float32 {
	b, kv := c.batch, c.kv
	hd, heads := kv.HeadDim, b.Heads
	group := heads / kv.KVHeads
	scale := AttnScale(hd)
	out := make([]float32, len(b.Out))
	for si, s := range b.Seqs {
		for tok := s.Start; tok < s.End; tok++ {
			pos := int(b.Positions[tok])
			for h := 0; h < heads; h++ {
				g := h / group
				q := b.Q[(tok*heads+h)*hd : (tok*heads+h+1)*hd]
				acc := make([]float32, hd)
				m, sum := float32(math.Inf(-1)), float32(0)
				for c0 := 0; c0 <= pos; c0 += 64 {
					var p [64]float32
					for j := range p {
						p[j] = float32(math.Inf(-1)) // masked
					}
					mx := float32(math.Inf(-1))
					for j := 0; c0+j <= pos && j < 64; j++ {
						k := c.history[si][c0+j][g*hd : (g+1)*hd]
						var d float32
						for i := range q {
							d = fmaf(q[i], k[i], d)
						}
						p[j] = d * scale
						mx = max(mx, p[j])
					}
					if mx > m {
						f := expf(m - mx)
						for i := range acc {
							acc[i] *= f
						}
						sum *= f
						m = mx
					}
					var ts float64
					for j0 := 0; j0 < 64; j0 += 8 {
						e := p[j0 : j0+8]
						for i := range e {
							e[i] = exp32(e[i] - m)
						}
						ts += float64(((e[0] + e[4]) + (e[2] + e[6])) + ((e[1] + e[5]) + (e[3] + e[7])))
					}
					sum = float32(float64(sum) + ts)
					for j := 0; c0+j <= pos && j < 64; j++ {
						v := c.vals[si][c0+j][g*hd : (g+1)*hd]
						for i := range acc {
							acc[i] = fmaf(p[j], v[i], acc[i])
						}
					}
				}
				o := out[(tok*heads+h)*hd : (tok*heads+h+1)*hd]
				for i := range o {
					o[i] = acc[i] * (1 / sum)
				}
			}
		}
	}
	return out
}

func TestAttention(t *testing.T) {
	pool := NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(23, 24))
	seqs := []seqSpec{
		{0, 1},   // first token of a prompt
		{37, 38}, // decode at position 37
		{10, 26}, // prefill chunk on top of history
		{0, 21},  // whole prompt
		{100, 101},
		{60, 140},  // prefill chunk across tiles 0..2, several runs
		{255, 256}, // decode at the last position of tile 3
	}
	for _, tc := range []struct {
		name                    string
		heads, kvHeads, headDim int
		blockSize               int
	}{
		{"MHA", 4, 4, 32, 16},
		{"GQA 128 generic simd", 4, 2, 128, 16},
		{"GQA", 8, 2, 64, 16},
		{"MQA", 6, 1, 16, 5},
		{"GQA odd block", 12, 4, 8, 7},
		{"GQA block 24", 4, 2, 32, 24}, // 8-key extensions at tile-unaligned block starts
		{"MHA block 40", 2, 2, 16, 40},
		{"MQA block 12", 4, 1, 16, 12}, // a block starting 4 keys before the tile end
	} {
		if strings.Contains(tc.name, "generic") {
			defer simd.ForceGeneric(simd.ForceGeneric(true))
		}
		for _, f16 := range []bool{true, false} {
			c := newAttnCase(r, f16, tc.heads, tc.kvHeads, tc.headDim, tc.blockSize, seqs)
			if err := pool.Attention(c.kv, c.batch); err != nil {
				t.Fatalf("%s f16=%v: %v", tc.name, f16, err)
			}
			for i, w := range c.reference() {
				if d := math.Abs(float64(c.batch.Out[i]) - w); d > 2e-6 {
					t.Fatalf("%s f16=%v: out[%d] = %g, want %g", tc.name, f16, i, c.batch.Out[i], w)
				}
			}
			want := c.tiledReference()
			for i, w := range want {
				if math.Float32bits(c.batch.Out[i]) != math.Float32bits(w) {
					t.Fatalf("%s f16=%v: out[%d] = %g, tiled reference %g", tc.name, f16, i, c.batch.Out[i], w)
				}
			}
		}
	}
}

// TestAttentionBatchInvariance: a sequence's outputs are bit-identical
// whether it is computed alone or with others in one call.
func TestAttentionBatchInvariance(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	r := rand.New(rand.NewPCG(25, 26))
	c := newAttnCase(r, true, 8, 2, 32, 16, []seqSpec{{5, 6}, {40, 41}, {0, 17}})
	if err := pool.Attention(c.kv, c.batch); err != nil {
		t.Fatal(err)
	}
	w := c.batch.Heads * c.kv.HeadDim
	for si, s := range c.batch.Seqs {
		one := &AttnBatch{
			Q:         c.batch.Q[s.Start*w : s.End*w],
			Out:       make([]float32, (s.End-s.Start)*w),
			Positions: c.batch.Positions[s.Start:s.End],
			Seqs:      []AttnSeq{{0, s.End - s.Start, s.BlockTable}},
			Heads:     c.batch.Heads,
		}
		if err := pool.Attention(c.kv, one); err != nil {
			t.Fatal(err)
		}
		for i, v := range one.Out {
			if b := c.batch.Out[s.Start*w+i]; math.Float32bits(b) != math.Float32bits(v) {
				t.Fatalf("seq %d: element %d alone %g, batched %g", si, i, v, b)
			}
		}
	}
}

func TestAttentionErrors(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	r := rand.New(rand.NewPCG(27, 28))
	fresh := func() *attnCase { return newAttnCase(r, true, 4, 2, 8, 4, []seqSpec{{6, 8}}) }
	for _, tc := range []struct {
		name   string
		break_ func(c *attnCase)
	}{
		{"heads not a multiple", func(c *attnCase) { c.batch.Heads = 3 }},
		{"short Q", func(c *attnCase) { c.batch.Q = c.batch.Q[:len(c.batch.Q)-1] }},
		{"short Out", func(c *attnCase) { c.batch.Out = c.batch.Out[:1] }},
		{"range past end", func(c *attnCase) { c.batch.Seqs[0].End = 3 }},
		{"negative position", func(c *attnCase) { c.batch.Positions[0] = -1 }},
		{"table too short", func(c *attnCase) { c.batch.Seqs[0].BlockTable = c.batch.Seqs[0].BlockTable[:1] }},
		{"block out of range", func(c *attnCase) { c.batch.Seqs[0].BlockTable[0] = int32(c.kv.NumBlocks) }},
		{"overlapping seqs", func(c *attnCase) {
			c.batch.Seqs = append(c.batch.Seqs, AttnSeq{1, 2, c.batch.Seqs[0].BlockTable})
		}},
	} {
		c := fresh()
		tc.break_(c)
		for i := range c.batch.Out {
			c.batch.Out[i] = 42
		}
		if err := pool.Attention(c.kv, c.batch); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		for _, v := range c.batch.Out {
			if v != 42 {
				t.Fatalf("%s: Out written despite the error", tc.name)
			}
		}
	}
}

func TestPagedKVStore(t *testing.T) {
	for _, f16 := range []bool{true, false} {
		kv := NewPagedKV(4, 3, 2, 2, kvt(f16))
		table := []int32{2, 0}
		k := []float32{1, 2, 3, 4, 5, 6, 7, 8} // 2 tokens x (2 heads x 2)
		v := []float32{-1, -2, -3, -4, -5, -6, -7, -8}
		if err := kv.Store(table, []int32{1, 4}, k, v); err != nil {
			t.Fatal(err)
		}
		get := func(blk, slot, head, d int) (float32, float32) {
			i := ((blk*3+slot)*2+head)*2 + d
			if f16 {
				return simd.F16ToF32(kv.K16[i]), simd.F16ToF32(kv.V16[i])
			}
			return kv.K32[i], kv.V32[i]
		}
		// pos 1 -> block 2 slot 1; pos 4 -> block 0 slot 1.
		for _, c := range []struct {
			blk, slot, head, d int
			k                  float32
		}{
			{2, 1, 0, 0, 1}, {2, 1, 1, 1, 4}, {0, 1, 0, 0, 5}, {0, 1, 1, 1, 8},
		} {
			gk, gv := get(c.blk, c.slot, c.head, c.d)
			if gk != c.k || gv != -c.k {
				t.Fatalf("f16=%v block %d slot %d head %d d %d: k=%g v=%g, want %g", f16, c.blk, c.slot, c.head, c.d, gk, gv, c.k)
			}
		}
		for _, tc := range []struct {
			name  string
			table []int32
			pos   []int32
			k     []float32
		}{
			{"beyond table", table, []int32{0, 6}, k},
			{"negative", table, []int32{-1, 0}, k},
			{"block out of range", []int32{2, 9}, []int32{0, 4}, k},
			{"short k", table, []int32{0, 1}, k[:7]},
		} {
			before := append([]uint16(nil), kv.K16...)
			before32 := append([]float32(nil), kv.K32...)
			if err := kv.Store(tc.table, tc.pos, tc.k, v); err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			for i := range before {
				if kv.K16[i] != before[i] {
					t.Fatalf("%s: cache written despite the error", tc.name)
				}
			}
			for i := range before32 {
				if kv.K32[i] != before32[i] {
					t.Fatalf("%s: cache written despite the error", tc.name)
				}
			}
		}
	}
	mustPanic(t, "zero blocks", func() { NewPagedKV(0, 16, 1, 8, KVF16) })
}

func TestAttentionAllocs(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	r := rand.New(rand.NewPCG(29, 30))
	c := newAttnCase(r, true, 8, 2, 64, 16, []seqSpec{{30, 31}, {60, 61}, {0, 9}})
	if err := pool.Attention(c.kv, c.batch); err != nil { // grow scratch
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { _ = pool.Attention(c.kv, c.batch) }); a != 0 {
		t.Fatalf("%v allocations per Attention", a)
	}
}

// TestAttentionScale: AttnScale is llama.cpp's float32 1.0f/sqrtf(n)
// (values from C); for 96 and 112 float32(1/math.Sqrt(n)) is an ulp off.
func TestAttentionScale(t *testing.T) {
	for _, tc := range []struct {
		hd   int
		want float32
	}{
		{64, 0.125}, {128, 0x1.6a09e6p-4}, {96, 0x1.a20bd6p-4}, {112, 0x1.83092p-4}, {256, 0.0625},
	} {
		if got := AttnScale(tc.hd); got != tc.want {
			t.Errorf("AttnScale(%d) = %x, want %x", tc.hd, got, tc.want)
		}
	}
}

// TestFmaf checks fmaf against a+b*c computed exactly (math/big) and
// rounded once, on random operands and on ones built so that the float64
// sum lands exactly halfway between two float32 values (where rounding
// twice goes wrong).
func TestFmaf(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(1000).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	check := func(a, b, c float32) {
		t.Helper()
		if got, want := fmaf(a, b, c), exact(a, b, c); math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fmaf(%x, %x, %x) = %x, want %x", a, b, c, got, want)
		}
	}
	for i := 0; i < 200000; i++ {
		a := math.Float32frombits(r.Uint32())
		b := math.Float32frombits(r.Uint32())
		c := math.Float32frombits(r.Uint32())
		if i%2 == 0 { // ordinary magnitudes
			a, b, c = float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()*math.Ldexp(1, r.IntN(60)-30))
		}
		if math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) || a != a || b != b || c != c {
			continue
		}
		check(a, b, c)
	}
	// Sums that round in float64 to exactly halfway between two float32
	// values while the exact sum is 2^-70 to one side, where rounding
	// twice goes wrong: a*b = ±2^-24 (1 - 2^-46), c = 1 + 2^-23 (odd).
	for _, k := range []int{0, -20, 30} {
		a := float32(math.Ldexp(1+0x1p-23, -24+k))
		b := float32(1 - 0x1p-23)
		c := float32(math.Ldexp(1+0x1p-23, k))
		check(a, b, c)
		check(-a, b, c)
		check(a, -b, -c)
		check(-a, -b, -c)
	}
	// Results in float32's subnormal range.
	check(0x1p-75, 0x1.8p-74, -0x1p-149)
	check(0x1.000002p-75, 0x1p-75, 0x1p-149)
}

// TestExpfKnown: glibc's expf at points where it is not the correctly
// rounded e^x (so float32(math.Exp) would fail), and its special cases.
func TestExpfKnown(t *testing.T) {
	for _, tc := range []struct{ x, want float32 }{
		{0, 1}, {float32(math.Inf(-1)), 0}, {float32(math.Inf(1)), float32(math.Inf(1))},
		{89, float32(math.Inf(1))}, {-104, 0}, {-103.5, 0x1p-149}, {-87.5, 0x1.b2cafp-127},
		// glibc rounds these the other way than float32(math.Exp(x)):
		{-0x1.0115dp-1, 0x1.35e2dep-1}, {-0x1.015dc8p-1, 0x1.35b752p-1}, {-0x1.024ddcp-1, 0x1.35263ap-1},
	} {
		if got := expf(tc.x); math.Float32bits(got) != math.Float32bits(tc.want) {
			t.Errorf("expf(%x) = %x, want %x", tc.x, got, tc.want)
		}
	}
	if v := expf(float32(math.NaN())); v == v {
		t.Errorf("expf(NaN) = %v", v)
	}
}

// TestSimdAxpyIsFMA: Attention relies on simd's assembly Axpy being an
// exact float32 FMA per element (VFMADD231PS), as ggml's simd_gemm is. It
// used to run only when the set was exactly avx2, so it skipped on every
// AVX-512 machine (the default set there is avx512vnni); every assembly set
// shares that Axpy, and it passes under avx2, avxvnni and avx512vnni.
func TestSimdAxpyIsFMA(t *testing.T) {
	if simd.Impl() == "generic" {
		t.Skip("simd runs its generic kernels here; Attention uses fmaf instead")
	}
	r := rand.New(rand.NewPCG(43, 44))
	for _, n := range []int{1, 7, 8, 33, 64, 128} {
		for k := 0; k < 200; k++ {
			x, y := randFloats(r, n, 1), randFloats(r, n, 1)
			alpha := float32(r.NormFloat64())
			want := make([]float32, n)
			for i := range want {
				want[i] = fmaf(alpha, x[i], y[i])
			}
			simd.Axpy(alpha, x, y)
			for i := range y {
				if y[i] != want[i] {
					t.Fatalf("n=%d: simd.Axpy [%d] = %x, fma %x", n, i, y[i], want[i])
				}
			}
		}
	}
}

// Cross-checks against llama.cpp's own code. ggmlHarnessC is a C program
// that runs single ggml ops (and the libm functions ggml calls) on the CPU
// backend the oracle ships (shared/oracle: node-llama-cpp's
// libggml-base.so and libggml-cpu-haswell.so, AVX2+FMA+F16C, and the
// system's glibc). checkGgml compares kiln's result for each case with
// ggml's in two ways: with the sha256 recorded from ggml's output when the
// case was written (always), and element by element with a live run of the
// harness when KILN_GGML_LIB names the directory of those libraries (and gcc
// is installed), e.g.
//
//	KILN_GGML_LIB=/tmp/oracle/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64 go test ./kernels -run Ggml -v
//
// Input records (little endian) start with an int32 op code, 0 ends:
//
//	1 rope   mode hd heads T ndims int32, base freqscale f32, hasff int32,
//	         x [T][heads][hd] f32, pos [T] i32, ff [ndims/2] f32 if hasff
//	2 attn   hd hq hkv nq nkv int32, scale f32, q [nq][hq][hd] f32,
//	         k, v [nkv][hkv][hd] f16, pos [nq] i32 (row t sees cells 0..pos[t])
//	3 rms    n rows int32, eps f32, x [rows][n] f32, w [n] f32
//	4 sincos n int32, x [n] f32 -> [n][sin, cos]
//	5 exp    n int32, x [n] f32
//	6 attnq  hd hq hkv nq nkv type rk rv int32, scale f32, q [nq][hq][hd] f32,
//	         k, v [nkv][hkv][hd] f32 copied into a cache of ggml type type
//	         (8 Q8_0, 2 Q4_0) by ggml_cpy, pos [nq] i32; q and k rotated in
//	         chunks of rk, v and the output in chunks of rv (0: not) as
//	         llama.cpp's llama_mul_mat_hadamard
//	7 quant  n rows type rot int32, x [rows][n] f32 -> the bytes of ggml_cpy
//	         into type of x rotated in chunks of rot (0: not)
//
// Each record's output is its float32 result (op 7: the quantized bytes).
const ggmlHarnessC = `
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
struct ggml_context; struct ggml_tensor; struct ggml_cgraph;
struct ggml_init_params { size_t mem_size; void *mem_buffer; bool no_alloc; };
struct ggml_context *ggml_init(struct ggml_init_params);
void ggml_free(struct ggml_context *);
struct ggml_tensor *ggml_new_tensor_1d(struct ggml_context *, int, int64_t);
struct ggml_tensor *ggml_new_tensor_2d(struct ggml_context *, int, int64_t, int64_t);
struct ggml_tensor *ggml_new_tensor_3d(struct ggml_context *, int, int64_t, int64_t, int64_t);
void *ggml_get_data(const struct ggml_tensor *);
size_t ggml_nbytes(const struct ggml_tensor *);
struct ggml_tensor *ggml_rope_ext(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *,
    int, int, int, float, float, float, float, float, float);
struct ggml_tensor *ggml_flash_attn_ext(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *,
    struct ggml_tensor *, float, float, float);
void ggml_flash_attn_ext_set_prec(struct ggml_tensor *, int);
struct ggml_tensor *ggml_permute(struct ggml_context *, struct ggml_tensor *, int, int, int, int);
struct ggml_tensor *ggml_rms_norm(struct ggml_context *, struct ggml_tensor *, float);
struct ggml_tensor *ggml_mul(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);
struct ggml_tensor *ggml_cpy(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);
struct ggml_tensor *ggml_mul_mat(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);
void ggml_mul_mat_set_hint(struct ggml_tensor *, int);
struct ggml_tensor *ggml_reshape_2d(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t);
struct ggml_tensor *ggml_reshape_3d(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t);
int64_t ggml_nelements(const struct ggml_tensor *);
struct ggml_cgraph *ggml_new_graph(struct ggml_context *);
void ggml_build_forward_expand(struct ggml_cgraph *, struct ggml_tensor *);
int ggml_graph_compute_with_ctx(struct ggml_context *, struct ggml_cgraph *, int);
void ggml_cpu_init(void);
uint16_t ggml_fp32_to_fp16(float);
enum { F32 = 0, F16 = 1, I32 = 26, PREC_F32 = 10 };

static void rd(void *p, size_t n) { if (fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); } }
static int32_t ri(void) { int32_t v; rd(&v, 4); return v; }
static float rf(void) { float v; rd(&v, 4); return v; }
static struct ggml_tensor *in(struct ggml_tensor *t) { rd(ggml_get_data(t), ggml_nbytes(t)); return t; }
// had rotates x [a][b][c] in chunks of n as llama_mul_mat_hadamard (a
// mul_mat hinted GGML_HINT_SRC0_IS_HADAMARD: ggml's fast transform).
static struct ggml_tensor *had(struct ggml_context *ctx, struct ggml_tensor *x, int n, int64_t a, int64_t b, int64_t c) {
    if (n == 0) return x;
    struct ggml_tensor *r = ggml_mul_mat(ctx, ggml_new_tensor_2d(ctx, F32, n, n), ggml_reshape_2d(ctx, x, n, ggml_nelements(x) / n));
    ggml_mul_mat_set_hint(r, 1);
    return ggml_reshape_3d(ctx, r, a, b, c);
}
static void out(struct ggml_context *ctx, struct ggml_tensor *y) {
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    if (ggml_graph_compute_with_ctx(ctx, gf, 2) != 0) { fprintf(stderr, "compute failed\n"); exit(1); }
    fwrite(ggml_get_data(y), 1, ggml_nbytes(y), stdout);
}

int main(void) {
    ggml_cpu_init();
    for (int op; (op = ri()) != 0;) {
        struct ggml_init_params ip = { 256u << 20, NULL, false };
        struct ggml_context *ctx = ggml_init(ip);
        if (op == 1) {
            int mode = ri(), hd = ri(), heads = ri(), T = ri(), nd = ri();
            float base = rf(), fs = rf();
            int hasff = ri();
            struct ggml_tensor *x = in(ggml_new_tensor_3d(ctx, F32, hd, heads, T));
            struct ggml_tensor *pos = in(ggml_new_tensor_1d(ctx, I32, T));
            struct ggml_tensor *ff = hasff ? in(ggml_new_tensor_1d(ctx, F32, nd / 2)) : NULL;
            out(ctx, ggml_rope_ext(ctx, x, pos, ff, nd, mode, 0, base, fs, 0.0f, 1.0f, 32.0f, 1.0f));
        } else if (op == 2) {
            int hd = ri(), hq = ri(), hkv = ri(), nq = ri(), nkv = ri();
            float scale = rf();
            struct ggml_tensor *q = in(ggml_new_tensor_3d(ctx, F32, hd, hq, nq));
            struct ggml_tensor *k = in(ggml_new_tensor_3d(ctx, F16, hd, hkv, nkv));
            struct ggml_tensor *v = in(ggml_new_tensor_3d(ctx, F16, hd, hkv, nkv));
            struct ggml_tensor *m = ggml_new_tensor_2d(ctx, F16, nkv, nq);
            uint16_t *mask = ggml_get_data(m);
            for (int t = 0; t < nq; t++) {
                int p = ri();
                for (int j = 0; j < nkv; j++) mask[(size_t)t * nkv + j] = ggml_fp32_to_fp16(j <= p ? 0.0f : -INFINITY);
            }
            struct ggml_tensor *y = ggml_flash_attn_ext(ctx, ggml_permute(ctx, q, 0, 2, 1, 3),
                ggml_permute(ctx, k, 0, 2, 1, 3), ggml_permute(ctx, v, 0, 2, 1, 3), m, scale, 0.0f, 0.0f);
            ggml_flash_attn_ext_set_prec(y, PREC_F32);
            out(ctx, y);
        } else if (op == 6) {
            int hd = ri(), hq = ri(), hkv = ri(), nq = ri(), nkv = ri(), typ = ri(), rk = ri(), rv = ri();
            float scale = rf();
            struct ggml_tensor *q = had(ctx, in(ggml_new_tensor_3d(ctx, F32, hd, hq, nq)), rk, hd, hq, nq);
            struct ggml_tensor *k32 = had(ctx, in(ggml_new_tensor_3d(ctx, F32, hd, hkv, nkv)), rk, hd, hkv, nkv);
            struct ggml_tensor *v32 = had(ctx, in(ggml_new_tensor_3d(ctx, F32, hd, hkv, nkv)), rv, hd, hkv, nkv);
            struct ggml_tensor *k = ggml_cpy(ctx, k32, ggml_new_tensor_3d(ctx, typ, hd, hkv, nkv));
            struct ggml_tensor *v = ggml_cpy(ctx, v32, ggml_new_tensor_3d(ctx, typ, hd, hkv, nkv));
            struct ggml_tensor *m = ggml_new_tensor_2d(ctx, F16, nkv, nq);
            uint16_t *mask = ggml_get_data(m);
            for (int t = 0; t < nq; t++) {
                int p = ri();
                for (int j = 0; j < nkv; j++) mask[(size_t)t * nkv + j] = ggml_fp32_to_fp16(j <= p ? 0.0f : -INFINITY);
            }
            struct ggml_tensor *y = ggml_flash_attn_ext(ctx, ggml_permute(ctx, q, 0, 2, 1, 3),
                ggml_permute(ctx, k, 0, 2, 1, 3), ggml_permute(ctx, v, 0, 2, 1, 3), m, scale, 0.0f, 0.0f);
            ggml_flash_attn_ext_set_prec(y, PREC_F32);
            out(ctx, had(ctx, y, rv, hd, hq, nq));
        } else if (op == 7) {
            int n = ri(), rows = ri(), typ = ri(), rot = ri();
            struct ggml_tensor *x = had(ctx, in(ggml_new_tensor_3d(ctx, F32, n, rows, 1)), rot, n, rows, 1);
            out(ctx, ggml_cpy(ctx, x, ggml_new_tensor_3d(ctx, typ, n, rows, 1)));
        } else if (op == 3) {
            int n = ri(), rows = ri();
            float eps = rf();
            struct ggml_tensor *x = in(ggml_new_tensor_2d(ctx, F32, n, rows));
            struct ggml_tensor *w = in(ggml_new_tensor_1d(ctx, F32, n));
            out(ctx, ggml_mul(ctx, ggml_rms_norm(ctx, x, eps), w));
        } else if (op == 4 || op == 5) {
            int n = ri();
            for (int i = 0; i < n; i++) {
                float x = rf(), y[2];
                if (op == 4) sincosf(x, &y[0], &y[1]); else y[0] = expf(x);
                fwrite(y, 4, op == 4 ? 2 : 1, stdout);
            }
        } else { fprintf(stderr, "bad op %d\n", op); return 1; }
        ggml_free(ctx);
    }
    return 0;
}
`

var ggmlBuild struct {
	once sync.Once
	bin  string
	err  error
}

// ggmlRun runs the harness on one record and returns its output, or nil
// (having logged why) when no live harness is available.
func ggmlRun(t *testing.T, rec []byte) []byte {
	t.Helper()
	lib := os.Getenv("KILN_GGML_LIB")
	if lib == "" {
		return nil
	}
	ggmlBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "kiln-ggml")
		if err != nil {
			ggmlBuild.err = err
			return
		}
		src := filepath.Join(dir, "ggmlops.c")
		if err := os.WriteFile(src, []byte(ggmlHarnessC), 0o644); err != nil {
			ggmlBuild.err = err
			return
		}
		bin := filepath.Join(dir, "ggmlops")
		cmd := exec.Command("gcc", "-O2", "-o", bin, src, "-L"+lib, "-l:libggml-base.so", "-l:libggml-cpu-haswell.so",
			"-Wl,-rpath,"+lib, "-lm")
		if out, err := cmd.CombinedOutput(); err != nil {
			ggmlBuild.err = fmt.Errorf("building the ggml harness: %v\n%s", err, out)
			return
		}
		ggmlBuild.bin = bin
	})
	if ggmlBuild.err != nil {
		t.Fatalf("KILN_GGML_LIB is set but: %v", ggmlBuild.err)
	}
	cmd := exec.Command(ggmlBuild.bin)
	cmd.Stdin = bytes.NewReader(binary.LittleEndian.AppendUint32(append([]byte(nil), rec...), 0))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ggml harness: %v\n%s", err, stderr.Bytes())
	}
	return out
}

// ggmlRecord appends little-endian values (int32, float32, uint16 and
// slices of them) to a harness record.
func ggmlRecord(vals ...any) []byte {
	var b bytes.Buffer
	for _, v := range vals {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			panic(err)
		}
	}
	return b.Bytes()
}

// checkGgml compares got with ggml's output for rec: by the sha256 prefix
// recorded from ggml (want), and element by element with a live harness.
func checkGgml(t *testing.T, name string, rec []byte, got []float32, want string) {
	t.Helper()
	h := sha256.New()
	if err := binary.Write(h, binary.LittleEndian, got); err != nil {
		t.Fatal(err)
	}
	sum := hex.EncodeToString(h.Sum(nil))[:16]
	if live := ggmlRun(t, rec); live != nil {
		if len(live) != 4*len(got) {
			t.Fatalf("%s: ggml returned %d bytes for %d values", name, len(live), len(got))
		}
		bad, first := 0, -1
		for i, g := range got {
			if math.Float32bits(g) != binary.LittleEndian.Uint32(live[4*i:]) {
				if bad++; first < 0 {
					first = i
				}
			}
		}
		if bad > 0 {
			w := math.Float32frombits(binary.LittleEndian.Uint32(live[4*first:]))
			t.Errorf("%s: %d of %d values differ from ggml's, first [%d] kiln %x ggml %x", name, bad, len(got), first, got[first], w)
		} else if sum != want {
			t.Logf("%s: equal to ggml's live output; record its hash %q", name, sum)
		}
	}
	if sum != want {
		t.Errorf("%s: kiln's output hashes to %s, ggml's recorded output to %s", name, sum, want)
	}
}

// TestAttentionGgml: Attention against ggml_flash_attn_ext (tiled path:
// 64 or more query rows), over several tiles of history with rows at tile
// edges, F16 cache pages scattered, the rows computed in two calls.
func TestAttentionGgml(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	for _, tc := range []struct {
		name                 string
		hd, hq, hkv, nq, nkv int
		qScale               float64 // large: the running max grows from tile to tile
		blockSize            int
		want                 string
	}{
		{"64 rows from 0", 64, 4, 2, 64, 64, 1, 16, "4d662bf3b1a15087"},
		{"chunk over history", 64, 8, 2, 64, 300, 3, 16, "1e598e67e20bccce"},
		{"head 128, 100 rows", 128, 4, 1, 100, 230, 5, 7, "d4c9b071c7aed124"},
		{"head 80, MHA", 80, 3, 3, 70, 200, 2, 32, "38e047efe486444b"},
	} {
		r := rand.New(rand.NewPCG(51, uint64(tc.nkv)))
		q := randFloats(r, tc.nq*tc.hq*tc.hd, float32(tc.qScale))
		k16 := make([]uint16, tc.nkv*tc.hkv*tc.hd)
		v16 := make([]uint16, len(k16))
		kf, vf := make([]float32, len(k16)), make([]float32, len(k16))
		for i := range k16 {
			k16[i], v16[i] = simd.F32ToF16(float32(r.NormFloat64())), simd.F32ToF16(float32(r.NormFloat64()))
			kf[i], vf[i] = simd.F16ToF32(k16[i]), simd.F16ToF32(v16[i])
		}
		pos := make([]int32, tc.nq) // the last nq positions, and a few rows at tile edges
		for i := range pos {
			pos[i] = int32(tc.nkv - tc.nq + i)
		}
		pos[3], pos[5] = 0, 63
		if tc.nkv > 64 {
			pos[6] = 64
		}
		kv, table := scatteredKV(t, r, KVF16, tc.nkv, tc.blockSize, tc.hkv, tc.hd, kf, vf)
		got := attendInTwoParts(t, pool, kv, table, q, pos, tc.hq, tc.hd)
		rec := ggmlRecord(int32(2), []int32{int32(tc.hd), int32(tc.hq), int32(tc.hkv), int32(tc.nq), int32(tc.nkv)},
			AttnScale(tc.hd), q, k16, v16, pos)
		checkGgml(t, tc.name, rec, got, tc.want)
	}
}

// TestExpfGgml: expf against glibc's on a sweep of float32 bit patterns
// of both signs (about 1.7 million values).
func TestExpfGgml(t *testing.T) {
	x := floatSweep(5003)
	got := make([]float32, len(x))
	for i, v := range x {
		got[i] = expf(v)
	}
	checkGgml(t, "expf sweep", ggmlRecord(int32(5), int32(len(x)), x), got, "01e26776355e733b")
}

// floatSweep returns the float32 values with bit patterns k*stride below
// +Inf, and their negations.
func floatSweep(stride uint32) []float32 {
	var x []float32
	for u := uint32(0); u < 0x7f800000; u += stride {
		x = append(x, math.Float32frombits(u), math.Float32frombits(u|0x80000000))
	}
	return x
}
