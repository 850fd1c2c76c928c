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
// results are batch invariant. A Q8_0 cache on the avx512vnni kernel set
// takes runQuantTile (attentionqtile.go), the same loop in fused assembly
// tiles; q4_0 and the other sets take runQuant below.

// attnSumFMA says whether the running sum S = S*ms + vs is one fused
// multiply-add. In the oracle's haswell build it is not: a product rounded,
// then a sum (with the fused form 5-14% of TestAttentionQuantGgml's outputs
// differed from ggml's in the last bits; unfused, none).
const attnSumFMA = false

// runQuant runs the (run, KV head) items [lo, hi) over a quantized cache.
// The g query heads of the KV head go through each key run together:
// their scores from each key row read once (four queries at a time), their
// expf arguments in one vector call each, and the value rows dequantized once for two heads at a time
// (simd.AxpyQ8_0Rows2), split wherever any head meets a new maximum.
func (t *attnTask) runQuant(worker, lo, hi int) {
	kv, b := t.kv, t.b
	hd, g := kv.HeadDim, t.group
	const T = attnTileKV
	wk := t.work[worker]
	sc, wk := wk[:g*T], wk[g*T:] // [g][T] scores
	p, wk := wk[:g*T], wk[g*T:]  // [g][T] expf arguments, then weights
	acc, wk := wk[:g*hd], wk[g*hd:]
	qr, wk := wk[:hd], wk[hd:] // rotated query
	ms, wk := wk[:g], wk[g:]   // running maxima
	ss, wk := wk[:g], wk[g:]   // running sums
	s4 := wk[:4*T]             // [T][4] scores of four heads
	qrb := KVQ8_0.RowBytes(hd)
	qq := t.qq[worker][:(g+3)/4*4*qrb] // rows past g: padding for the 4-query dots
	rotK, rotV := kv.rotK(), kv.rotV()
	bs, rb := kv.BlockSize, kv.RowBytes()
	hb := kv.Type.RowBytes(hd) // bytes of one head's part of a row
	dot4, axpy, axpy2 := simd.DotQ8_0Rows4, simd.AxpyQ8_0Rows, simd.AxpyQ8_0Rows2
	if kv.Type == KVQ4_0 {
		dot4, axpy, axpy2 = simd.DotQ4_0Rows4, simd.AxpyQ4_0Rows, simd.AxpyQ4_0Rows2
	}
	for it := lo; it < hi; it++ {
		ri, kvh := it/kv.KVHeads, it%kv.KVHeads
		t0, t1 := int(t.runs[2*ri]), int(t.runs[2*ri+1])
		table := b.Seqs[t.tokSeq[t0]].BlockTable
		for tok := t0; tok < t1; tok++ {
			pos := int(b.Positions[tok])
			row0 := (tok*b.Heads + kvh*g) * hd // the group's first query row
			for h := 0; h < g; h++ {
				q := b.Q[row0+h*hd : row0+(h+1)*hd]
				if rotK > 0 {
					copy(qr, q)
					fwht(qr, rotK)
					q = qr
				}
				quantizeActQ8_0(q, qq[h*qrb:(h+1)*qrb])
				ms[h], ss[h] = float32(math.Inf(-1)), 0
			}
			clear(acc)
			for j := 0; j <= pos; {
				slot := j % bs
				n := min(bs-slot, pos+1-j, T)
				off := (int(table[j/bs])*bs+slot)*rb + kvh*hb
				end := off + (n-1)*rb + hb
				// Scores, and the arguments of every expf (the running
				// max is a prefix max of the scores) in one vector call.
				for h0 := 0; h0 < g; h0 += 4 { // four heads' scores per key row read
					dot4(hd, qq[h0*qrb:], qrb, kv.KQ[off:end], rb, s4[:4*n])
					for h := h0; h < min(h0+4, g); h++ {
						hs := sc[h*T : h*T+n]
						for i := range hs {
							hs[i] = s4[4*i+h-h0]
						}
					}
				}
				for h := 0; h < g; h++ {
					hs, hp := sc[h*T:h*T+n], p[h*T:h*T+n]
					m := ms[h]
					for i, x := range hs {
						x *= t.scale
						hs[i] = x
						if x > m {
							hp[i] = m - x // ms = expf(Mold - M)
							m = x
						} else {
							hp[i] = x - m // vs = expf(s - M)
						}
					}
					simd.ExpfRow(hp, hp)
				}
				// Sums and values key by key: the values between two keys
				// where some head meets a new maximum go in one call.
				flush := func(a, e int) {
					if e <= a {
						return
					}
					v := kv.VQ[off+a*rb : off+(e-1)*rb+hb]
					h := 0
					for ; h+2 <= g; h += 2 {
						axpy2(p[h*T+a:h*T+e], p[(h+1)*T+a:(h+1)*T+e], v, rb, acc[h*hd:(h+1)*hd], acc[(h+1)*hd:(h+2)*hd])
					}
					if h < g {
						axpy(p[h*T+a:h*T+e], v, rb, acc[h*hd:(h+1)*hd])
					}
				}
				j0 := 0 // first key of the values not yet added
				for i := 0; i < n; i++ {
					ev := false
					for h := 0; h < g; h++ {
						if sc[h*T+i] > ms[h] {
							ev = true
							break
						}
					}
					if !ev {
						for h := 0; h < g; h++ {
							ss[h] = sumStep(ss[h], 1, p[h*T+i])
						}
						continue
					}
					flush(j0, i)
					j0 = i
					for h := 0; h < g; h++ {
						if x := sc[h*T+i]; x > ms[h] {
							f := p[h*T+i]
							ms[h] = x
							simd.Scale(f, acc[h*hd:(h+1)*hd])
							p[h*T+i] = 1
							ss[h] = sumStep(ss[h], f, 1)
						} else {
							ss[h] = sumStep(ss[h], 1, p[h*T+i])
						}
					}
				}
				flush(j0, n)
				j += n
			}
			for h := 0; h < g; h++ {
				inv := float32(0)
				if s := ss[h]; s != 0 {
					inv = 1 / s
				}
				o := b.Out[row0+h*hd : row0+(h+1)*hd]
				for i, v := range acc[h*hd : (h+1)*hd] {
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
