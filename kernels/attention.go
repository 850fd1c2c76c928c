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
	Heads     int     // query heads; a multiple of the cache's KVHeads
	Scale     float32 // score scale; 0 means 1/sqrt(HeadDim)
}

// Attention computes causal multi-head attention for every token of b's
// sequences against its sequence's cached keys and values: the token at
// position pos attends to positions 0..pos (inclusive) through the
// sequence's block table. Query head h reads KV head h/(Heads/KVHeads)
// (GQA; MQA and MHA are the cases KVHeads = 1 and KVHeads = Heads).
//
//	out[t][h] = sum_j softmax_j(Scale * q[t][h]·K[j][g]) V[j][g]   j = 0..pos(t), g = h*KVHeads/Heads
//
// The softmax is online (FlashAttention's tiling idea): keys are visited a
// block at a time, keeping per head a running max M, a running sum S and an
// unnormalised float32 output, rescaled when M grows; no score matrix is
// built. Work items are (token, KV head) pairs of all sequences together,
// so a decode step of many sequences is one pool dispatch, and each item
// reads its K and V rows once for the Heads/KVHeads query heads sharing them.
//
// Rounding, compared with llama.cpp's CPU flash attention (the default of
// the oracle; ggml_compute_forward_flash_attn_ext_f16):
//   - With an F16 cache, q is rounded to F16 before the q·k dots, as ggml
//     converts Q to K's vec_dot_type (one_chunk path, used for decode and
//     small batches; its tiled prefill path keeps q in F32). With an F32
//     cache q stays F32.
//   - Scores, probabilities and the output accumulator stay float32; ggml's
//     one_chunk path keeps the V accumulator in F16 (rounded after every
//     key), its tiled path in F32 like kiln. The non-flash path rounds the
//     probabilities to F16 before P·V; kiln does not.
//   - e^x is exp32 (ggml_v_expf); sums are float32 as in ggml.
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
	group := b.Heads / kv.KVHeads
	per := 2*group*kv.HeadDim + group*kv.BlockSize + 2*group // q, acc, scores, M, S
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
		scale = 1 / float32(math.Sqrt(float64(kv.HeadDim)))
	}
	t := &s.attn
	*t = attnTask{kv: kv, b: b, tokSeq: tokSeq, work: s.attnWork, group: group, scale: scale}
	items := n * kv.KVHeads
	p.run(items, max(1, items/(8*p.threads)), t)
	*t = attnTask{}
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

// attnTask runs the (token, KV head) items [lo, hi) of one Attention call.
type attnTask struct {
	kv     *PagedKV
	b      *AttnBatch
	tokSeq []int32     // [numTokens] index into b.Seqs, -1 for none
	work   [][]float32 // per-worker scratch
	group  int         // query heads per KV head
	scale  float32
}

func (t *attnTask) Run(worker, lo, hi int) {
	kv, b := t.kv, t.b
	hd, bs, g := kv.HeadDim, kv.BlockSize, t.group
	wk := t.work[worker]
	q := wk[:g*hd]                          // [g][hd] queries (rounded to F16 for an F16 cache)
	acc := wk[g*hd : 2*g*hd]                // [g][hd] unnormalised outputs
	sc := wk[2*g*hd : 2*g*hd+g*bs]          // [g][bs] scores, then probabilities, of one block
	mS := wk[2*g*hd+g*bs : 2*g*hd+g*bs+2*g] // [g] running max, then [g] running sum
	for it := lo; it < hi; it++ {
		tok, kvh := it/kv.KVHeads, it%kv.KVHeads
		si := t.tokSeq[tok]
		if si < 0 {
			continue
		}
		table := b.Seqs[si].BlockTable
		ctx := int(b.Positions[tok]) + 1 // keys 0..pos
		qRow := b.Q[(tok*b.Heads+kvh*g)*hd : (tok*b.Heads+(kvh+1)*g)*hd]
		if kv.F16 {
			for i, v := range qRow {
				q[i] = simd.F16ToF32(simd.F32ToF16(v))
			}
		} else {
			copy(q, qRow)
		}
		clear(acc)
		for h := 0; h < g; h++ {
			mS[h] = float32(math.Inf(-1))
			mS[g+h] = 0
		}
		for j := 0; j*bs < ctx; j++ {
			n := min(bs, ctx-j*bs)
			base := int(table[j]) * bs * kv.KVHeads * hd
			// Scores of this block's n keys for each head of the group.
			for s := 0; s < n; s++ {
				off := base + (s*kv.KVHeads+kvh)*hd
				for h := 0; h < g; h++ {
					var d float32
					if kv.F16 {
						d = simd.DotF32F16(q[h*hd:(h+1)*hd], kv.K16[off:off+hd])
					} else {
						d = simd.DotF32(q[h*hd:(h+1)*hd], kv.K32[off:off+hd])
					}
					sc[h*bs+s] = d * t.scale
				}
			}
			// Online softmax update: rescale by e^(Mold-Mnew) when the max grows.
			for h := 0; h < g; h++ {
				row := sc[h*bs : h*bs+n]
				mx := mS[h]
				for _, v := range row {
					if v > mx {
						mx = v
					}
				}
				if mx > mS[h] {
					f := exp32(mS[h] - mx) // 0 on the first block (M = -Inf)
					simd.Scale(f, acc[h*hd:(h+1)*hd])
					mS[g+h] *= f
					mS[h] = mx
				}
				var sum float32
				for i, v := range row {
					e := exp32(v - mx)
					row[i] = e
					sum += e
				}
				mS[g+h] += sum
			}
			// acc += P · V for the block.
			for s := 0; s < n; s++ {
				off := base + (s*kv.KVHeads+kvh)*hd
				for h := 0; h < g; h++ {
					pr := sc[h*bs+s]
					if kv.F16 {
						simd.AxpyF16(pr, kv.V16[off:off+hd], acc[h*hd:(h+1)*hd])
					} else {
						simd.Axpy(pr, kv.V32[off:off+hd], acc[h*hd:(h+1)*hd])
					}
				}
			}
		}
		out := b.Out[(tok*b.Heads+kvh*g)*hd : (tok*b.Heads+(kvh+1)*g)*hd]
		for h := 0; h < g; h++ {
			inv := float32(0)
			if s := mS[g+h]; s != 0 {
				inv = 1 / s
			}
			o, a := out[h*hd:(h+1)*hd], acc[h*hd:(h+1)*hd]
			for i, v := range a {
				o[i] = v * inv
			}
		}
	}
}
