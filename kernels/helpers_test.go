package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"kiln/gguf"
	"kiln/kernels/simd"
	"kiln/quant"
)

// testTypes are the weight types MatMul must support.
var testTypes = []gguf.Type{
	gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0,
	gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1,
	gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
}

// halfFields lists, per block type, the byte offsets of f16 scale fields,
// which random bytes must not fill with Inf/NaN.
var halfFields = map[gguf.Type][]int{
	gguf.TypeQ8_0: {0},
	gguf.TypeQ4_0: {0},
	gguf.TypeQ5_0: {0},
	gguf.TypeQ4_1: {0, 2},
	gguf.TypeQ5_1: {0, 2},
	gguf.TypeQ4_K: {0, 2},
	gguf.TypeQ5_K: {0, 2},
	gguf.TypeQ2_K: {80, 82},
	gguf.TypeQ3_K: {108},
	gguf.TypeQ6_K: {208},
}

func randFloats(r *rand.Rand, n int, scale float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64()) * scale
	}
	return x
}

// randMatrix returns a rows x cols matrix of type t with random contents:
// floats ~ N(0, 0.1²), quantized blocks with random quants and scales of a
// few hundredths (as trained weights have).
func randMatrix(r *rand.Rand, t gguf.Type, rows, cols int) *Matrix {
	rb, err := t.RowBytes(cols)
	if err != nil {
		panic(err)
	}
	data := make([]byte, rows*rb)
	switch t {
	case gguf.TypeF32:
		copy(data, bytesOfF32(randFloats(r, rows*cols, 0.1)))
	case gguf.TypeF16:
		for i, v := range randFloats(r, rows*cols, 0.1) {
			binary.LittleEndian.PutUint16(data[2*i:], simd.F32ToF16(v))
		}
	case gguf.TypeBF16:
		for i, v := range randFloats(r, rows*cols, 0.1) {
			binary.LittleEndian.PutUint16(data[2*i:], quant.F32ToBF16(v))
		}
	default:
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		bb := t.BlockBytes()
		for b := 0; b < len(data)/bb; b++ {
			for _, off := range halfFields[t] {
				v := float32(r.Float64()*0.02 + 0.001)
				if r.IntN(4) == 0 {
					v = -v
				}
				binary.LittleEndian.PutUint16(data[b*bb+off:], simd.F32ToF16(v))
			}
		}
	}
	return &Matrix{Type: t, Rows: rows, Cols: cols, Data: data}
}

// refRow dequantizes row r of w with quant (bit-exact with ggml's to_float).
func refRow(w *Matrix, r int) []float64 {
	rb, _ := w.Type.RowBytes(w.Cols)
	f := make([]float32, w.Cols)
	if err := quant.Dequantize(w.Type, w.Data[r*rb:(r+1)*rb], f); err != nil {
		panic(err)
	}
	return to64(f)
}

// refActRow returns x's row as the weight's dot sees it: converted to the
// vec_dot_type and expanded back.
func refActRow(t gguf.Type, x []float32) []float64 {
	vd := vecDots[t]
	if vd.convert == nil {
		return to64(x)
	}
	rb, _ := vd.act.RowBytes(len(x))
	buf := make([]byte, rb)
	vd.convert(x, buf)
	f := make([]float32, len(x))
	if err := quant.Dequantize(vd.act, buf, f); err != nil {
		panic(err)
	}
	return to64(f)
}

func to64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func dot64(a, b []float64) (sum, abs float64) {
	for i := range a {
		sum += a[i] * b[i]
		abs += math.Abs(a[i] * b[i])
	}
	return sum, abs
}

// ulpDiff is the distance in float32 ulps between a and b of the same sign.
func ulpDiff(a, b float32) int64 {
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia > ib {
		return ia - ib
	}
	return ib - ia
}

func name(parts ...any) string { return fmt.Sprint(parts...) }

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// scatteredKV stores nkv positions of kf, vf ([nkv][hkv*hd]) into a fresh
// cache of type typ whose block table is a random permutation of its
// pages (two spare pages, so the table is not the identity), and returns
// the cache and the table.
func scatteredKV(t *testing.T, r *rand.Rand, typ KVType, nkv, blockSize, hkv, hd int, kf, vf []float32) (*PagedKV, []int32) {
	t.Helper()
	nb := (nkv + blockSize - 1) / blockSize
	kv := NewPagedKV(nb+2, blockSize, hkv, hd, typ)
	table := make([]int32, nb)
	for i, p := range r.Perm(nb + 2)[:nb] {
		table[i] = int32(p)
	}
	all := make([]int32, nkv)
	for i := range all {
		all[i] = int32(i)
	}
	if err := kv.Store(table, all, kf, vf); err != nil {
		t.Fatal(err)
	}
	return kv, table
}

// attendInTwoParts runs one sequence's attention over q ([len(pos)][hq*hd])
// as two batches, rows [0, 7) and [7, len(pos)), and returns the output.
func attendInTwoParts(t *testing.T, pool *Pool, kv *PagedKV, table []int32, q []float32, pos []int32, hq, hd int) []float32 {
	t.Helper()
	got := make([]float32, len(q))
	w := hq * hd
	for _, part := range [][2]int{{0, 7}, {7, len(pos)}} {
		lo, hi := part[0], part[1]
		if err := pool.Attention(kv, &AttnBatch{Q: q[lo*w : hi*w], Out: got[lo*w : hi*w], Positions: pos[lo:hi],
			Heads: hq, Seqs: []AttnSeq{{0, hi - lo, table}}}); err != nil {
			t.Fatal(err)
		}
	}
	return got
}
