package kernels

import (
	"math"

	"kiln/kernels/simd"
)

// Attention over a Q8_0 or Q4_0 cache follows llama.cpp's CPU flash
// attention for quantized K/V, which never takes the tiled path (that needs
// F16 or F32 K and V): ggml_compute_forward_flash_attn_ext_f16_one_chunk,
// one query row at a time, bit for bit, between llama.cpp's Hadamard
// rotations (hadamard.go: the query rotated as the keys were, the output
// rotated back as the values were):
//
//	qq    = Q8_0 of the (rotated) query row (quantize_row_q8_0, AVX2 rounding)
//	for each position j = 0..pos, in order:
//	  s = dot(K_j, qq) * Scale        (vec_dot_q8_0_q8_0 / vec_dot_q4_0_q8_0)
//	  if s > M: ms = expf(M - s); M = s; acc *= ms; vs = 1
//	  else:     ms = 1; vs = expf(s - M)
//	  acc[d] = fma(dequant(V_j)[d], vs, acc[d])
//	  S = S*ms + vs                   (see attnSumFMA)
//	out = acc * (1/S)                 (0 when S is 0), then rotated back
//
// with glibc's expf. Scores are computed for a page's run of up to
// attnTileKV positions at once, and the values between two new maxima are
// added in one strided call: each acc element still sees the same FMAs in
// the same order. Every token's row is independent of the batch, so
// results are batch invariant.

// attnSumFMA says whether the running sum S = S*ms + vs is one fused
// multiply-add. In the oracle's haswell build it is not: a product rounded,
// then a sum (with the fused form 5-14% of TestAttentionQuantGgml's outputs
// differed from ggml's in the last bits; unfused, none).
const attnSumFMA = false

// runQuant runs the (run, KV head) items [lo, hi) over a quantized cache.
func (t *attnTask) runQuant(worker, lo, hi int) {
	kv, b := t.kv, t.b
	hd, g := kv.HeadDim, t.group
	const T = attnTileKV
	wk := t.work[worker]
	sc, p, acc, qr := wk[:T], wk[T:2*T], wk[2*T:2*T+hd], wk[2*T+hd:2*T+2*hd]
	rotK, rotV := kv.rotK(), kv.rotV()
	qq := t.qq[worker][:KVQ8_0.RowBytes(hd)]
	bs, rb := kv.BlockSize, kv.RowBytes()
	hb := kv.Type.RowBytes(hd) // bytes of one head's part of a row
	dot, axpy := simd.DotQ8_0Rows, simd.AxpyQ8_0Rows
	if kv.Type == KVQ4_0 {
		dot, axpy = simd.DotQ4_0Rows, simd.AxpyQ4_0Rows
	}
	for it := lo; it < hi; it++ {
		ri, kvh := it/kv.KVHeads, it%kv.KVHeads
		t0, t1 := int(t.runs[2*ri]), int(t.runs[2*ri+1])
		table := b.Seqs[t.tokSeq[t0]].BlockTable
		for tok := t0; tok < t1; tok++ {
			pos := int(b.Positions[tok])
			for h := 0; h < g; h++ {
				row := (tok*b.Heads + kvh*g + h) * hd
				q := b.Q[row : row+hd]
				if rotK > 0 {
					copy(qr, q)
					fwht(qr, rotK)
					q = qr
				}
				quantizeActQ8_0(q, qq)
				clear(acc)
				m, s := float32(math.Inf(-1)), float32(0)
				for j := 0; j <= pos; {
					slot := j % bs
					n := min(bs-slot, pos+1-j, T)
					off := (int(table[j/bs])*bs+slot)*rb + kvh*hb
					end := off + (n-1)*rb + hb
					dot(qq, kv.KQ[off:end], rb, sc[:n])
					// The arguments of every expf first (the running max is a
					// prefix max of the scores), computed in one vector call;
					// then the sums and values key by key.
					m0 := m
					for i, x := range sc[:n] {
						x *= t.scale
						sc[i] = x
						if x > m {
							p[i] = m - x // ms = expf(Mold - M)
							m = x
						} else {
							p[i] = x - m // vs = expf(s - M)
						}
					}
					simd.ExpfRow(p[:n], p[:n])
					m = m0
					j0 := 0 // first key of the values not yet added
					for i, x := range sc[:n] {
						if x > m {
							if i > j0 {
								axpy(p[j0:i], kv.VQ[off+j0*rb:off+(i-1)*rb+hb], rb, acc)
							}
							ms := p[i]
							m = x
							simd.Scale(ms, acc)
							p[i] = 1
							s = sumStep(s, ms, 1)
							j0 = i
						} else {
							s = sumStep(s, 1, p[i])
						}
					}
					axpy(p[j0:n], kv.VQ[off+j0*rb:end], rb, acc)
					j += n
				}
				inv := float32(0)
				if s != 0 {
					inv = 1 / s
				}
				o := b.Out[row : row+hd]
				for i, v := range acc {
					o[i] = v * inv
				}
				if rotV > 0 {
					fwht(o, rotV) // back from the rotated values
				}
			}
		}
	}
}

// sumStep is one step of the running sum, S*ms + vs, fused or not as
// attnSumFMA says.
func sumStep(s, ms, vs float32) float32 {
	if attnSumFMA {
		return simd.FMA32(s, ms, vs)
	}
	return float32(s*ms) + vs // the conversion forbids Go from fusing
}
