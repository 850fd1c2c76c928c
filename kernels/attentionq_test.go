package kernels

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"kiln/kernels/simd"
	"kiln/quant"
)

// ggmlType is the ggml type id of a quantized KV type.
func ggmlType(t KVType) int32 {
	if t == KVQ4_0 {
		return 2
	}
	return 8
}

// TestStoreQuantGgml: the rows Store writes into a Q8_0 / Q4_0 cache are
// the bytes ggml_cpy (llama.cpp's cache write: from_float of the type)
// makes of the same floats after llama.cpp's Hadamard rotation (none for
// heads of 32; K in chunks of 64 or 128, V of 64 otherwise), and those of
// the quant package's llama.cpp quantizers (QuantizeActQ8_0: AVX2
// quantize_row_q8_0; QuantizeQ4_0: quantize_row_q4_0_ref) of the rotated
// rows. Values include ties of the rounding, zeros and a whole-zero block.
func TestStoreQuantGgml(t *testing.T) {
	for _, tc := range []struct {
		typ  KVType
		hd   int
		want string // K rows then V rows
	}{
		{KVQ8_0, 32, "6b05ed9640b40332"}, {KVQ4_0, 32, "58b04663b7a70a30"},
		{KVQ8_0, 64, "c7aa7d91dd6aac09"}, {KVQ4_0, 128, "f26298085d89caa1"},
	} {
		r := rand.New(rand.NewPCG(61, uint64(tc.typ)))
		const hkv, n = 2, 12
		w := hkv * tc.hd
		x := randFloats(r, n*w, 1)
		for i := 0; i < 32; i++ {
			x[w+i] = 0 // a zero block
		}
		for i := 0; i < 64; i++ {
			x[2*w+i] = float32(i%9-4) * 0.5 // ties: x*id lands on .5 in several blocks
		}
		kv := NewPagedKV(4, 4, hkv, tc.hd, tc.typ)
		table := []int32{2, 0, 3}
		pos := make([]int32, n)
		for i := range pos {
			pos[i] = int32(i)
		}
		if err := kv.Store(table, pos, x, x); err != nil {
			t.Fatal(err)
		}
		rb := kv.RowBytes()
		var gotK, gotV []byte
		for p := range n {
			o := (int(table[p/4])*4 + p%4) * rb
			gotK = append(gotK, kv.KQ[o:o+rb]...)
			gotV = append(gotV, kv.VQ[o:o+rb]...)
		}
		name := fmt.Sprintf("%s head %d", tc.typ, tc.hd)
		for _, c := range []struct {
			got []byte
			rot int
		}{{gotK, kv.rotK()}, {gotV, kv.rotV()}} {
			xr := append([]float32(nil), x...)
			if c.rot > 0 {
				fwht(xr, c.rot)
			}
			ref := make([]byte, n*rb)
			if tc.typ == KVQ8_0 {
				quant.QuantizeActQ8_0(xr, ref)
			} else {
				quant.QuantizeQ4_0(xr, ref)
			}
			if !bytes.Equal(c.got, ref) {
				t.Errorf("%s (rotation %d): stored rows differ from the quant package's", name, c.rot)
			}
			if live := ggmlRun(t, ggmlRecord(int32(7), []int32{int32(w), n, ggmlType(tc.typ), int32(c.rot)}, x)); live != nil && !bytes.Equal(live, c.got) {
				t.Errorf("%s (rotation %d): stored rows differ from ggml's", name, c.rot)
			}
		}
		sum := sha256.Sum256(append(gotK, gotV...))
		if h := hex.EncodeToString(sum[:])[:16]; h != tc.want {
			t.Errorf("%s: stored rows hash to %s, ggml's recorded to %s", name, h, tc.want)
		}
	}
}

// TestAttentionQuantGgml: Store and Attention over Q8_0 and Q4_0 pages
// against ggml_flash_attn_ext over a cache ggml_cpy quantized from the
// same floats (its one_chunk path, which quantized caches always take),
// between llama.cpp's Hadamard rotations of q, k, v and the output (heads
// of 64 and 128; none for 32), pages scattered, rows computed in two calls.
func TestAttentionQuantGgml(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	for _, tc := range []struct {
		name                 string
		typ                  KVType
		hd, hq, hkv, nq, nkv int
		qScale               float64 // large: the running max grows often
		blockSize            int
		want                 string
	}{
		{"q8_0 head 64", KVQ8_0, 64, 4, 2, 20, 300, 3, 16, "c4b147c777d887c6"},
		{"q8_0 head 128", KVQ8_0, 128, 4, 1, 9, 230, 5, 7, "26106f9ad0d85681"},
		{"q8_0 head 32 MHA", KVQ8_0, 32, 3, 3, 70, 100, 0.5, 32, "d06b82204278eb4a"},
		{"q4_0 head 64", KVQ4_0, 64, 4, 2, 20, 300, 3, 16, "b7aa14af7b0fecaf"},
		{"q4_0 head 128", KVQ4_0, 128, 4, 1, 9, 230, 5, 7, "1f1589fa3ffa0637"},
	} {
		r := rand.New(rand.NewPCG(71, uint64(tc.nkv)))
		q := randFloats(r, tc.nq*tc.hq*tc.hd, float32(tc.qScale))
		kf := randFloats(r, tc.nkv*tc.hkv*tc.hd, 1)
		vf := randFloats(r, tc.nkv*tc.hkv*tc.hd, 1)
		pos := make([]int32, tc.nq) // the last nq positions, and a few early rows
		for i := range pos {
			pos[i] = int32(tc.nkv - tc.nq + i)
		}
		pos[1], pos[3], pos[5] = 0, 1, 63
		kv, table := scatteredKV(t, r, tc.typ, tc.nkv, tc.blockSize, tc.hkv, tc.hd, kf, vf)
		got := attendInTwoParts(t, pool, kv, table, q, pos, tc.hq, tc.hd)
		rec := ggmlRecord(int32(6), []int32{int32(tc.hd), int32(tc.hq), int32(tc.hkv), int32(tc.nq), int32(tc.nkv), ggmlType(tc.typ),
			int32(kv.rotK()), int32(kv.rotV())},
			AttnScale(tc.hd), q, kf, vf, pos)
		checkGgml(t, tc.name, rec, got, tc.want)
	}
}

// kvt is the F16 or F32 cache type of the older tests' f16 flag.
func kvt(f16 bool) KVType {
	if f16 {
		return KVF16
	}
	return KVF32
}

// oneChunkReference computes c's outputs over a quantized cache as
// llama.cpp's one_chunk flash attention does, key by key, straight from
// its description (no runs of scores, no batched value rows): the query
// rotated and quantized, s = dot(K_j, qq)*scale, the online softmax with
// expf, V_j dequantized and added with one FMA per element, S = S*ms + vs
// unfused, the output scaled by 1/S and rotated back.
func (c *attnCase) oneChunkReference() []float32 {
	b, kv := c.batch, c.kv
	hd, heads := kv.HeadDim, b.Heads
	group := heads / kv.KVHeads
	scale := AttnScale(hd)
	rb, hb := kv.RowBytes(), kv.Type.RowBytes(hd)
	out := make([]float32, len(b.Out))
	qq := make([]byte, KVQ8_0.RowBytes(hd))
	v32 := make([]float32, hd)
	for _, sq := range b.Seqs {
		for tok := sq.Start; tok < sq.End; tok++ {
			pos := int(b.Positions[tok])
			for h := 0; h < heads; h++ {
				g := h / group
				q := append([]float32(nil), b.Q[(tok*heads+h)*hd:(tok*heads+h+1)*hd]...)
				if n := kv.rotK(); n > 0 {
					fwht(q, n)
				}
				quant.QuantizeActQ8_0(q, qq)
				acc := make([]float32, hd)
				m, sum := float32(math.Inf(-1)), float32(0)
				for j := 0; j <= pos; j++ {
					off := (int(sq.BlockTable[j/kv.BlockSize])*kv.BlockSize+j%kv.BlockSize)*rb + g*hb
					var s float32
					if kv.Type == KVQ8_0 {
						s = simd.DotQ8_0Q8_0(hd, kv.KQ[off:off+hb], qq)
						quant.DequantizeQ8_0(kv.VQ[off:off+hb], v32)
					} else {
						s = simd.DotQ4_0Q8_0Lanes(hd, kv.KQ[off:off+hb], qq)
						quant.DequantizeQ4_0(kv.VQ[off:off+hb], v32)
					}
					s *= scale
					ms, vs := float32(1), float32(1)
					if s > m {
						ms = expf(m - s)
						m = s
						for i := range acc {
							acc[i] *= ms
						}
					} else {
						vs = expf(s - m)
					}
					for i := range acc {
						acc[i] = fmaf(v32[i], vs, acc[i])
					}
					sum = float32(sum*ms) + vs
				}
				o := out[(tok*heads+h)*hd : (tok*heads+h+1)*hd]
				for i := range o {
					o[i] = acc[i] * (1 / sum)
				}
				if n := kv.rotV(); n > 0 {
					fwht(o, n)
				}
			}
		}
	}
	return out
}

// TestAttentionQuant: Attention over Q8_0 and Q4_0 pages equals the
// key-by-key one_chunk reference bit for bit, under every kernel set this
// CPU runs (heads of 32: no rotation; 64 and 128: rotated; GQA, MHA, MQA;
// decode tokens, prefill chunks across tiles and blocks, odd block sizes),
// and is within the quantization error of the exact float64 attention.
func TestAttentionQuant(t *testing.T) {
	defer simd.ForceGeneric(false)
	pool := NewPool(3)
	defer pool.Close()
	seqs := []seqSpec{{0, 1}, {37, 38}, {10, 26}, {0, 21}, {60, 140}, {255, 256}}
	for _, typ := range []KVType{KVQ8_0, KVQ4_0} {
		for _, tc := range []struct {
			heads, kvHeads, headDim, blockSize int
		}{
			{4, 4, 32, 16}, {4, 2, 128, 16}, {8, 2, 64, 7}, {6, 1, 64, 40}, {2, 1, 256, 16},
		} {
			r := rand.New(rand.NewPCG(91, uint64(tc.headDim)))
			c := newAttnCaseKV(r, typ, tc.heads, tc.kvHeads, tc.headDim, tc.blockSize, seqs)
			want := c.oneChunkReference()
			exact := c.reference()
			for _, set := range simd.Impls() {
				if _, err := simd.SetImpl(set); err != nil {
					t.Fatal(err)
				}
				clear(c.batch.Out)
				if err := pool.Attention(c.kv, c.batch); err != nil {
					t.Fatalf("%s %+v: %v", typ, tc, err)
				}
				for i, w := range want {
					if math.Float32bits(c.batch.Out[i]) != math.Float32bits(w) {
						t.Fatalf("%s %+v %s: out[%d] = %g, one_chunk reference %g", typ, tc, set, i, c.batch.Out[i], w)
					}
				}
			}
			// Quantization error against exact attention over the unquantized
			// floats (the query is quantized too): measured worst 0.0305
			// (q8_0) and 0.351 (q4_0) on these unit-normal rows.
			tol := map[KVType]float64{KVQ8_0: 0.1, KVQ4_0: 1.0}[typ]
			worst := 0.0
			for i, w := range exact {
				worst = math.Max(worst, math.Abs(float64(c.batch.Out[i])-w))
			}
			if worst > tol {
				t.Errorf("%s %+v: worst |out - exact| %.3g exceeds %g", typ, tc, worst, tol)
			}
			t.Logf("%s %+v: worst |out - exact| %.3g", typ, tc, worst)
		}
	}
}

// TestAttentionQuantBatchInvariance: over a quantized cache too, a
// sequence's outputs are bit-identical alone or batched with others.
func TestAttentionQuantBatchInvariance(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	for _, typ := range []KVType{KVQ8_0, KVQ4_0} {
		r := rand.New(rand.NewPCG(25, 26))
		c := newAttnCaseKV(r, typ, 8, 2, 64, 16, []seqSpec{{5, 6}, {40, 41}, {0, 17}, {70, 90}})
		if err := pool.Attention(c.kv, c.batch); err != nil {
			t.Fatal(err)
		}
		w := c.batch.Heads * c.kv.HeadDim
		for si, s := range c.batch.Seqs {
			for lo := s.Start; lo < s.End; lo += 7 { // alone, in pieces of up to 7 tokens
				hi := min(lo+7, s.End)
				one := &AttnBatch{Q: c.batch.Q[lo*w : hi*w], Out: make([]float32, (hi-lo)*w),
					Positions: c.batch.Positions[lo:hi], Seqs: []AttnSeq{{0, hi - lo, s.BlockTable}}, Heads: c.batch.Heads}
				if err := pool.Attention(c.kv, one); err != nil {
					t.Fatal(err)
				}
				for i, v := range one.Out {
					if b := c.batch.Out[lo*w+i]; math.Float32bits(b) != math.Float32bits(v) {
						t.Fatalf("%s seq %d: element %d alone %g, batched %g", typ, si, lo*w+i, v, b)
					}
				}
			}
		}
	}
}

// TestAttentionQuantAllocs: Store and Attention over a quantized cache
// allocate nothing once the scratch has grown.
func TestAttentionQuantAllocs(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	for _, typ := range []KVType{KVQ8_0, KVQ4_0} {
		r := rand.New(rand.NewPCG(29, 30))
		c := newAttnCaseKV(r, typ, 8, 2, 128, 16, []seqSpec{{30, 31}, {60, 61}, {0, 9}})
		if err := pool.Attention(c.kv, c.batch); err != nil { // grow scratch
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(20, func() { _ = pool.Attention(c.kv, c.batch) }); a != 0 {
			t.Fatalf("%s: %v allocations per Attention", typ, a)
		}
		k := randFloats(r, 2*128, 1)
		table, pos := c.batch.Seqs[0].BlockTable, []int32{3}
		if a := testing.AllocsPerRun(20, func() { _ = c.kv.Store(table, pos, k, k) }); a != 0 {
			t.Fatalf("%s: %v allocations per Store", typ, a)
		}
	}
}
