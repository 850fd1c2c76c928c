package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
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
	need := 0
	for _, s := range seqs {
		need += (s.to + blockSize - 1) / blockSize
	}
	numBlocks := need + 3
	kv := NewPagedKV(numBlocks, blockSize, kvHeads, headDim, f16)
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
		kv := NewPagedKV(4, 3, 2, 2, f16)
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
	mustPanic(t, "zero blocks", func() { NewPagedKV(0, 16, 1, 8, true) })
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

// TestSimdAxpyIsFMA: Attention relies on simd's AVX2 Axpy being an exact
// float32 FMA per element (VFMADD231PS), as ggml's simd_gemm is.
func TestSimdAxpyIsFMA(t *testing.T) {
	if simd.Impl() != "avx2" {
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
