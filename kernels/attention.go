package kernels

import (
	"fmt"
	"math"

	"kiln/kernels/simd"
)

// AttnSeq is one sequence's part of a batched attention call: the token
// rows [Start, End) of the batch, and the physical KV blocks of the
// sequence in order (position pos is in block BlockTable[pos/BlockSize]).
type AttnSeq struct {
	Start, End int
	BlockTable []int32
}

// AttnBatch is the attention input of one forward step for all sequences,
// laid out as the model's batch: token rows of all sequences concatenated.
// The keys and values of these tokens must already be in the cache (Store).
type AttnBatch struct {
	Q         []float32 // [numTokens][Heads*HeadDim] queries, after RoPE
	Out       []float32 // [numTokens][Heads*HeadDim] written for the tokens of Seqs
	Positions []int32   // [numTokens] position of each token in its sequence
	Seqs      []AttnSeq
	Heads     int // query heads; a multiple of the cache's KVHeads
	// Scale multiplies the q·k scores; 0 means AttnScale(HeadDim), the
	// float32 1/sqrtf(HeadDim) that llama.cpp uses.
	Scale float32
}

// AttnScale returns llama.cpp's attention score scale for heads of
// headDim elements, 1.0f/sqrtf(headDim) in float32 arithmetic (for
// 96 or 112 it is one ulp away from float32(1/math.Sqrt(headDim))).
func AttnScale(headDim int) float32 {
	return 1 / float32(math.Sqrt(float64(float32(headDim))))
}

// attnTileKV is the number of KV positions one online-softmax step covers:
// ggml's GGML_FA_TILE_KV. Tiles are counted from position 0 of a sequence.
const attnTileKV = 64

// attnRunLen bounds the run of consecutive tokens of one sequence that
// form a work item (their keys and values stay hot in L2 between tokens).
const attnRunLen = 16

// Attention computes causal multi-head attention for every token of b's
// sequences against its sequence's cached keys and values: the token at
// position pos attends to positions 0..pos (inclusive) through the
// sequence's block table. Query head h reads KV head h/(Heads/KVHeads)
// (GQA; MQA and MHA are the cases KVHeads = 1 and KVHeads = Heads).
//
//	out[t][h] = sum_j softmax_j(Scale * q[t][h]·K[j][g]) V[j][g]   j = 0..pos(t), g = h*KVHeads/Heads
//
// The arithmetic is that of llama.cpp's CPU flash attention in its tiled
// form (ggml_compute_forward_flash_attn_ext_tiled, the path the oracle's
// prompts take), bit for bit, for every token whatever the batch: the keys
// 0..pos of a row are visited in tiles of 64 positions counted from
// position 0, and per tile
//
//	s[j]   = fma(q[D-1], k[j][D-1], ... fma(q[1], k[j][1], q[0]*k[j][0])) * Scale
//	         (one float32 FMA chain per key, in element order; q stays float32,
//	          F16 keys are widened exactly)
//	M'     = max(M, max_j s[j]);  if M' > M: acc *= expf(M-M'), S *= expf(M-M')
//	p[j]   = exp(s[j] - M')      (ggml_v_expf, kiln's exp32)
//	S      = float32(float64(S) + sum of the tile's p, summed as ggml's AVX2
//	         ggml_vec_soft_max_f32: per 8 positions in float32,
//	         ((p0+p4)+(p2+p6)) + ((p1+p5)+(p3+p7)), the 8-sums in float64)
//	acc[d] = fma(p[j], v[j][d], acc[d])   for j in order
//
// and out = acc * (1/S). expf is glibc's (expf below). This holds for any
// batch size, so results are batch invariant; llama.cpp itself takes this
// path only for batches of 64 or more query rows. For smaller batches
// (single-token decode) its one_chunk path rounds q to F16 and keeps the V
// accumulator in F16, rounded after every key, and for one query over 512
// or more cells it splits the keys across threads: there kiln differs from
// llama.cpp by that F16 rounding (about 1e-3 relative) but not in kind.
// llama.cpp also takes one_chunk when the head size is not a multiple of 8.
// It tiles KV *cells*, which are positions only when the sequence's cells
// start at cell 0 in order (one sequence in a fresh context, as in the
// oracle); kiln tiles positions.
//
// Keys and values are read in place from the paged cache through simd's
// strided row primitives (DotF32F16Rows, AxpyF16Rows and their F32 twins),
// whose every implementation performs exactly these FMA chains.
//
// Over a Q8_0 or Q4_0 cache the arithmetic is instead that of llama.cpp's
// one_chunk flash attention, key by key, with its Hadamard rotations
// (attentionq.go): the path llama.cpp takes for quantized caches whatever
// the batch, so there kiln agrees with llama.cpp for decode too.
//
// Work items are (run, KV head) pairs: a run is up to 16 consecutive tokens
// of one sequence; each item serves the Heads/KVHeads query heads of its
// KV head.
//
// Attention validates the whole batch first and returns an error, writing
// nothing, if a shape is wrong, sequences' token ranges overlap, a
// position is negative, or a block table does not cover a position or names
// a block outside the cache. Tokens outside every sequence are skipped. It
// allocates nothing in steady state.
func (p *Pool) Attention(kv *PagedKV, b *AttnBatch) error {
	if err := kv.checkBatch(b); err != nil {
		return err
	}
	p.lock()
	defer p.mu.Unlock()
	s := &p.scratch
	n := len(b.Positions)
	if cap(s.tokSeq) < n {
		s.tokSeq = make([]int32, n)
	}
	tokSeq := s.tokSeq[:n]
	for i := range tokSeq {
		tokSeq[i] = -1
	}
	for si, sq := range b.Seqs {
		for t := sq.Start; t < sq.End; t++ {
			if tokSeq[t] >= 0 {
				return fmt.Errorf("kernels: Attention sequences %d and %d overlap at token %d", tokSeq[t], si, t)
			}
			tokSeq[t] = int32(si)
		}
	}
	t := &s.attn
	runs := t.runs[:0]
	for _, sq := range b.Seqs {
		for lo := sq.Start; lo < sq.End; lo += attnRunLen {
			runs = append(runs, int32(lo), int32(min(lo+attnRunLen, sq.End)))
		}
	}
	group := b.Heads / kv.KVHeads
	hd := kv.HeadDim
	// Per worker: one row's scores, and for each of the run's rows (token,
	// head) an accumulator, running max and sum.
	rows := attnRunLen * group
	per := attnTileKV + rows*hd + 2*rows
	if kv.Type.Quantized() {
		// runQuant: the group's scores, weights, accumulators, maxima and
		// sums, a rotated query, four heads' scores, and the group's
		// quantized queries (padded to a multiple of 4).
		per = max(per, 2*group*attnTileKV+group*hd+hd+2*group+4*attnTileKV)
		if len(s.attnQ) < p.threads {
			s.attnQ = make([][]byte, p.threads)
		}
		for w := range s.attnQ[:p.threads] {
			if n := (group + 3) / 4 * 4 * KVQ8_0.RowBytes(hd); len(s.attnQ[w]) < n {
				s.attnQ[w] = make([]byte, n)
			}
		}
	}
	tile := kv.useTiles()
	if tile {
		if len(s.attnTile) < p.threads {
			s.attnTile = make([]attnTileScratch, p.threads)
		}
		for w := range s.attnTile[:p.threads] {
			s.attnTile[w].size(hd)
		}
	}
	if len(s.attnWork) < p.threads {
		s.attnWork = make([][]float32, p.threads)
	}
	for w := range s.attnWork[:p.threads] {
		if cap(s.attnWork[w]) < per {
			s.attnWork[w] = make([]float32, per)
		}
	}
	scale := b.Scale
	if scale == 0 {
		scale = AttnScale(hd)
	}
	*t = attnTask{kv: kv, b: b, tokSeq: tokSeq, runs: runs, work: s.attnWork, qq: s.attnQ, group: group, scale: scale, byTile: tile, tiles: s.attnTile}
	items := len(runs) / 2 * kv.KVHeads
	p.run(items, max(1, items/(8*p.threads)), t)
	*t = attnTask{runs: runs[:0]}
	return nil
}

// checkBatch validates b against the cache's shape.
func (kv *PagedKV) checkBatch(b *AttnBatch) error {
	n := len(b.Positions)
	if b.Heads <= 0 || b.Heads%kv.KVHeads != 0 {
		return fmt.Errorf("kernels: Attention with %d query heads over %d KV heads: need a positive multiple", b.Heads, kv.KVHeads)
	}
	w := b.Heads * kv.HeadDim
	if len(b.Q) < n*w || len(b.Out) < n*w {
		return fmt.Errorf("kernels: Attention of %d tokens needs %d elements of Q and Out, have %d and %d", n, n*w, len(b.Q), len(b.Out))
	}
	for si, sq := range b.Seqs {
		if sq.Start < 0 || sq.End < sq.Start || sq.End > n {
			return fmt.Errorf("kernels: Attention sequence %d covers tokens [%d, %d) of %d", si, sq.Start, sq.End, n)
		}
		// Each token reads every block up to its own position's.
		last := -1
		for t := sq.Start; t < sq.End; t++ {
			pos := b.Positions[t]
			if pos < 0 {
				return fmt.Errorf("kernels: Attention sequence %d token %d has negative position %d", si, t, pos)
			}
			last = max(last, int(pos)/kv.BlockSize)
		}
		if last >= len(sq.BlockTable) {
			return fmt.Errorf("kernels: Attention sequence %d reaches block %d but its block table has %d", si, last, len(sq.BlockTable))
		}
		for j, blk := range sq.BlockTable[:last+1] {
			if blk < 0 || int(blk) >= kv.NumBlocks {
				return fmt.Errorf("kernels: Attention sequence %d block table entry %d is block %d, outside [0, %d)", si, j, blk, kv.NumBlocks)
			}
		}
	}
	return nil
}

// attnTask runs the (run, KV head) items [lo, hi) of one Attention call.
type attnTask struct {
	kv     *PagedKV
	b      *AttnBatch
	tokSeq []int32     // [numTokens] index into b.Seqs, -1 for none
	runs   []int32     // [numRuns][2] token ranges [lo, hi) of one sequence each
	work   [][]float32 // per-worker scratch
	qq     [][]byte    // per-worker quantized query (quantized caches)
	group  int         // query heads per KV head
	scale  float32
	byTile bool              // runQuantTile (kv.useTiles)
	tiles  []attnTileScratch // per-worker scratch of runQuantTile
}

func (t *attnTask) Run(worker, lo, hi int) {
	if t.byTile {
		t.runQuantTile(worker, lo, hi)
		return
	}
	if t.kv.Type.Quantized() {
		t.runQuant(worker, lo, hi)
		return
	}
	kv, b := t.kv, t.b
	hd, g := kv.HeadDim, t.group
	const T = attnTileKV
	rows := attnRunLen * g
	wk := t.work[worker]
	sc, wk := wk[:T:T], wk[T:]            // [T] one row's scores, then probabilities (cap T: tile bounds the 8-key extension)
	acc, wk := wk[:rows*hd], wk[rows*hd:] // [rows][hd] unnormalised outputs
	mS := wk[:2*rows]                     // [rows] running max, then [rows] running sum
	for it := lo; it < hi; it++ {
		ri, kvh := it/kv.KVHeads, it%kv.KVHeads
		t0, t1 := int(t.runs[2*ri]), int(t.runs[2*ri+1])
		table := b.Seqs[t.tokSeq[t0]].BlockTable
		nr := (t1 - t0) * g
		clear(acc[:nr*hd])
		for r := 0; r < nr; r++ {
			mS[r] = float32(math.Inf(-1))
			mS[rows+r] = 0
		}
		for tok := t0; tok < t1; tok++ {
			pos := int(b.Positions[tok])
			for c0 := 0; c0 <= pos; c0 += T {
				n := min(T, pos+1-c0) // positions of this tile the token sees
				for h := 0; h < g; h++ {
					r := (tok-t0)*g + h
					q := b.Q[(tok*b.Heads+kvh*g+h)*hd : (tok*b.Heads+kvh*g+h+1)*hd]
					t.tile(q, table, kvh, c0, sc[:n], acc[r*hd:(r+1)*hd], &mS[r], &mS[rows+r])
				}
			}
		}
		for tok := t0; tok < t1; tok++ {
			for h := 0; h < g; h++ {
				r := (tok-t0)*g + h
				inv := float32(0)
				if s := mS[rows+r]; s != 0 {
					inv = 1 / s
				}
				o := b.Out[(tok*b.Heads+kvh*g+h)*hd : (tok*b.Heads+kvh*g+h+1)*hd]
				for i, v := range acc[r*hd : (r+1)*hd] {
					o[i] = v * inv
				}
			}
		}
	}
}

// tile runs one online-softmax step of one query row q over the positions
// c0..c0+len(sc)-1 of its sequence (block table table, KV head kvh): scores
// into sc, the running max *m and sum *s updated, probabilities times the
// values added to acc. Keys and values are read in place from the cache,
// one block's run of slots at a time (rows KVHeads*HeadDim apart).
func (t *attnTask) tile(q []float32, table []int32, kvh, c0 int, sc, acc []float32, m, s *float32) {
	kv := t.kv
	n, hd, bs, stride := len(sc), kv.HeadDim, kv.BlockSize, kv.rowWidth()
	// Scores: one FMA chain per key in element order (simd's strided dots,
	// whose assembly takes 8 keys at a time). A run ending inside a block
	// is extended to a multiple of 8 over the block's next slots when they
	// exist (stale or unused cache slots: their scores land in sc[n:], past
	// what this row sees, and are overwritten below).
	for j := 0; j < n; {
		pos := c0 + j
		slot := pos % bs
		cnt := min(bs-slot, n-j)
		ext := cnt
		if r := cnt % 8; r != 0 && slot+cnt+8-r <= bs && j+cnt+8-r <= cap(sc) {
			ext = cnt + 8 - r
		}
		off := (int(table[pos/bs])*bs+slot)*stride + kvh*hd
		end := off + (ext-1)*stride + hd
		if kv.Type == KVF16 {
			simd.DotF32F16Rows(q, kv.K16[off:end], stride, sc[j:j+ext])
		} else {
			simd.DotF32Rows(q, kv.K32[off:end], stride, sc[j:j+ext])
		}
		j += cnt
	}
	mx := float32(math.Inf(-1))
	for i := range sc {
		sc[i] *= t.scale
		if sc[i] > mx {
			mx = sc[i]
		}
	}
	if !(mx > float32(math.Inf(-1))) {
		return // no finite score: ggml skips the row for this tile
	}
	if mx > *m {
		f := expf(*m - mx) // 0 on the first tile (M = -Inf)
		simd.Scale(f, acc)
		*s *= f
		*m = mx
	}
	// Probabilities, summed in ggml's AVX2 order (simd.ExpSum): 8 lanes
	// folded in float32, the 8-sums in float64. Masked positions (a partial
	// last group) are -Inf scores, exact zeros after the exp, as in ggml's
	// full-width tile.
	n8 := (n + 7) &^ 7
	full := sc[:n8]
	for i := n; i < n8; i++ {
		full[i] = float32(math.Inf(-1))
	}
	*s = float32(float64(*s) + simd.ExpSum(full, full, *m))
	// acc += p[j] * V[j], position by position (simd's strided axpys keep
	// acc in registers across a block's rows).
	for j := 0; j < n; {
		pos := c0 + j
		slot := pos % bs
		cnt := min(bs-slot, n-j)
		off := (int(table[pos/bs])*bs+slot)*stride + kvh*hd
		end := off + (cnt-1)*stride + hd
		if kv.Type == KVF16 {
			simd.AxpyF16Rows(sc[j:j+cnt], kv.V16[off:end], stride, acc)
		} else {
			simd.AxpyF32Rows(sc[j:j+cnt], kv.V32[off:end], stride, acc)
		}
		j += cnt
	}
}
