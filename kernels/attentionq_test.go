package kernels

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

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
		nb := (tc.nkv + tc.blockSize - 1) / tc.blockSize
		kv := NewPagedKV(nb+2, tc.blockSize, tc.hkv, tc.hd, tc.typ)
		table := make([]int32, nb)
		for i, p := range r.Perm(nb + 2)[:nb] {
			table[i] = int32(p)
		}
		all := make([]int32, tc.nkv)
		for i := range all {
			all[i] = int32(i)
		}
		if err := kv.Store(table, all, kf, vf); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, len(q))
		w := tc.hq * tc.hd
		for _, part := range [][2]int{{0, 7}, {7, tc.nq}} {
			lo, hi := part[0], part[1]
			if err := pool.Attention(kv, &AttnBatch{Q: q[lo*w : hi*w], Out: got[lo*w : hi*w], Positions: pos[lo:hi],
				Heads: tc.hq, Seqs: []AttnSeq{{0, hi - lo, table}}}); err != nil {
				t.Fatal(err)
			}
		}
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
