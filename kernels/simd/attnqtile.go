package simd

import (
	"fmt"
	"math"
)

// Tile primitives for attention over a Q8_0 cache: up to four query heads
// (the query heads of one KV head) against a tile of key rows that may lie
// anywhere in the cache (offs gives each row's byte offset, so a tile spans
// pages), in the arithmetic of llama.cpp's CPU flash attention for q8_0
// K/V (ggml_compute_forward_flash_attn_ext_f16_one_chunk, one query row at
// a time; see kernels/attentionq.go). The scores and value passes do per
// head, key after key, exactly what that loop does, so the result is the
// same bits as the one-query-at-a-time code (DotQ8_0Rows4, ExpfRow,
// AxpyQ8_0Rows). With the avx512vnni set they run as two assembly loops
// (attnqtile_amd64.s) that read each key and value row once for all heads,
// keep the accumulators in registers and need no Go code per key; the other
// sets run the reference below, made of the AVX2 kernels where those exist.

// Q8_0Queries holds up to four Q8_0 query rows (the quantized query heads
// of one KV head) for AttnScoresQ8_0, with the layout the assembly wants.
type Q8_0Queries struct {
	n      int    // elements per row, a multiple of 32
	rows   []byte // 4 Q8_0 rows, rowBytes apart; rows past the caller's are zero
	packed []byte // avx512vnni: per pair of blocks, qs, biases and scales (attnScoresQ8_0AVX512)
}

// Set stores the g ≤ 4 Q8_0 rows of n elements at qq[h*stride:], h < g;
// rows g..3 are zero (their scores are 0, their bits never set).
func (q *Q8_0Queries) Set(n int, qq []byte, stride, g int) {
	if n%qk != 0 || g < 1 || g > 4 {
		panic(fmt.Sprintf("simd: Q8_0Queries.Set: %d elements, %d rows: want whole blocks and 1..4 rows", n, g))
	}
	rb := n / qk * bytesQ8_0
	if stride < rb || len(qq) < (g-1)*stride+rb {
		panic(fmt.Sprintf("simd: Q8_0Queries.Set: %d bytes hold no %d rows of %d at stride %d", len(qq), g, rb, stride))
	}
	q.n = n
	if cap(q.rows) < 4*rb {
		q.rows = make([]byte, 4*rb)
	}
	q.rows = q.rows[:4*rb]
	clear(q.rows)
	for h := range g {
		copy(q.rows[h*rb:(h+1)*rb], qq[h*stride:h*stride+rb])
	}
	q.packed = q.packed[:0]
	if !vnni.Load() || (n/qk)%2 != 0 {
		return
	}
	// Per pair of blocks b, b+1 (768 bytes), as the assembly reads them
	// (64 B each): the quants of heads 0,1 in block b, [h0 | h1], then in
	// block b+1, then those of heads 2,3; in the same order the int32
	// lanes -128*(sum of the lane's 4 quants), the start of VPDPBUSD over
	// the key's quants biased by +128 (x^0x80 = x+128, so the biased sum
	// minus 128*sum(y) is the exact signed one); in the same order the
	// query scales as float32, 8 lanes per head.
	np := n / qk / 2
	if cap(q.packed) < np*768 {
		q.packed = make([]byte, np*768)
	}
	p := q.packed[:np*768]
	for c := range np {
		pc := p[c*768 : (c+1)*768]
		for h := range 4 {
			row := q.rows[h*rb:]
			for bi := range 2 {
				blk := row[(2*c+bi)*bytesQ8_0:]
				at := 128*(h/2) + 64*bi + 32*(h%2) // the 32 bytes of (head, block) in each part
				copy(pc[at:at+32], blk[2:34])
				d := math.Float32bits(f16At(blk, 0))
				for l := range 8 {
					s := int32(0)
					for e := range 4 {
						s += int32(int8(blk[2+4*l+e]))
					}
					putU32(pc[256+at+4*l:], uint32(-128*s))
					putU32(pc[512+at+4*l:], d)
				}
			}
		}
	}
	q.packed = p
}

func putU32(b []byte, v uint32) {
	_ = b[3]
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// AttnScoresQ8_0 runs the score half of the online softmax for the n =
// len(ev) key rows at k[offs[i]:] (Q8_0, q.n elements) and the four
// queries of q, key after key. For key i and head h:
//
//	s = DotQ8_0Q8_0(k_i, q_h) * scale
//	if s > m[h]: args[4i+h] = m[h] - s; m[h] = s; bit h of ev[i] set (h < g)
//	else:        args[4i+h] = s - m[h]
//
// args are then expf arguments (ExpfRow): the factor a new maximum scales
// the accumulator by, or the weight of the key's value row. Heads h ≥ g
// take part (their bits stay clear). It panics on short or out-of-range
// inputs.
func AttnScoresQ8_0(q *Q8_0Queries, k []byte, offs []int32, scale float32, g int, m *[4]float32, args []float32, ev []uint8) {
	n := len(ev)
	nb := q.n / qk
	rb := nb * bytesQ8_0
	if len(offs) < n || len(args) < 4*n || g < 1 || g > 4 {
		panic(fmt.Sprintf("simd: AttnScoresQ8_0: %d keys, %d offsets, %d args, %d heads", n, len(offs), len(args), g))
	}
	checkOffs("AttnScoresQ8_0", offs[:n], rb, len(k))
	if n == 0 || nb == 0 {
		return
	}
	if len(q.packed) > 0 && vnni.Load() {
		attnScoresQ8_0AVX512(nb, n, &q.packed[0], &k[0], &offs[0], scale, m, (1<<g)-1, &args[0], &ev[0])
		return
	}
	var s [4]float32
	for i := range n {
		kr := k[offs[i] : int(offs[i])+rb]
		if fast.Load() {
			dotQ8_0Q8_0x4AVX2(nb, kr, q.rows, rb, &s)
		} else {
			dotX4Generic(dotQ8_0Q8_0Generic, nb, kr, q.rows, rb, &s)
		}
		e := uint8(0)
		for h := range 4 {
			x := s[h] * scale
			if x > m[h] {
				args[4*i+h] = m[h] - x
				m[h] = x
				if h < g {
					e |= 1 << h
				}
			} else {
				args[4*i+h] = x - m[h]
			}
		}
		ev[i] = e
	}
}

// AttnValuesQ8_0 runs the value half for the n = len(ev) value rows at
// v[offs[i]:] (Q8_0, len(acc)/g elements) and g ≤ 4 heads whose
// accumulators are acc[h*d:(h+1)*d], key after key. p[4i+h] is key i's
// weight for head h and scl[4i+h] the factor the accumulator is scaled by
// first (read only for keys with ev[i] != 0: 1 for heads without a new
// maximum there). For key i and head h < g:
//
//	if ev[i] != 0: acc_h[e] *= scl[4i+h], every e
//	acc_h[e] = fma(dequant(v_i)[e], p[4i+h], acc_h[e])
//
// and for every h < 4 the running sum, unfused as attnSumFMA says:
//
//	s[h] = float32(s[h]*scl[4i+h]) + p[4i+h]   (ev[i] != 0)
//	s[h] = s[h] + p[4i+h]                       (otherwise; s*1 is s)
//
// It panics on short or out-of-range inputs.
func AttnValuesQ8_0(g int, p, scl []float32, ev []uint8, v []byte, offs []int32, acc []float32, s *[4]float32) {
	n := len(ev)
	if g < 1 || g > 4 || len(acc)%g != 0 || (len(acc)/g)%qk != 0 || len(p) < 4*n || len(scl) < 4*n || len(offs) < n {
		panic(fmt.Sprintf("simd: AttnValuesQ8_0: %d heads, accumulators of %d, %d keys, %d weights, %d factors, %d offsets", g, len(acc), n, len(p), len(scl), len(offs)))
	}
	d := len(acc) / g
	nb := d / qk
	rb := nb * bytesQ8_0
	checkOffs("AttnValuesQ8_0", offs[:n], rb, len(v))
	if n == 0 {
		return
	}
	if nb > 0 && nb%2 == 0 && vnni.Load() {
		attnValuesQ8_0AVX512(nb, g, n, &p[0], &ev[0], &scl[0], &v[0], &offs[0], &acc[0], s)
		return
	}
	for i := range n {
		if ev[i] != 0 {
			for h := range 4 {
				s[h] = float32(s[h]*scl[4*i+h]) + p[4*i+h]
			}
			for h := range g {
				a := acc[h*d : (h+1)*d]
				if f := scl[4*i+h]; f != 1 {
					Scale(f, a)
				}
			}
		} else {
			for h := range 4 {
				s[h] += p[4*i+h]
			}
		}
		vr := v[offs[i] : int(offs[i])+rb]
		h := 0
		for ; h+2 <= g; h += 2 {
			AxpyQ8_0Rows2(p[4*i+h:4*i+h+1], p[4*i+h+1:4*i+h+2], vr, rb, acc[h*d:(h+1)*d], acc[(h+1)*d:(h+2)*d])
		}
		if h < g {
			AxpyQ8_0Rows(p[4*i+h:4*i+h+1], vr, rb, acc[h*d:(h+1)*d])
		}
	}
}

// checkOffs panics unless every row of rb bytes at offs[i] lies in have
// bytes.
func checkOffs(fn string, offs []int32, rb, have int) {
	for i, o := range offs {
		if o < 0 || int(o)+rb > have {
			panic(fmt.Sprintf("simd: %s: row %d at offset %d (+%d bytes) outside %d bytes", fn, i, o, rb, have))
		}
	}
}

// AttnTileQ8_0Fast says whether AttnScoresQ8_0 and AttnValuesQ8_0 run as
// assembly for rows of n elements under the current kernel set
// (avx512vnni, n a multiple of 64); otherwise they are the reference,
// slower than the one-row kernels the caller may prefer.
func AttnTileQ8_0Fast(n int) bool { return vnni.Load() && n > 0 && n%64 == 0 }
