package kernels

import (
	"fmt"

	"kiln/kernels/simd"
	"kiln/quant"
)

// PagedKV is one layer's key/value cache in pages (blocks) of BlockSize
// token slots. Which blocks a sequence owns is decided outside (package
// kvcache): a sequence's block table lists its physical blocks in order, so
// its position pos lives in block blockTable[pos/BlockSize], slot
// pos%BlockSize.
//
//	K, V: [numBlocks][BlockSize][KVHeads][HeadDim]
//	element (blk, slot, head, d) at ((blk*BlockSize + slot)*KVHeads + head)*HeadDim + d
//
// Storage is Type: F16 (K16, V16 hold IEEE half bits, like llama.cpp's
// default cache), F32 (K32, V32), or Q8_0 / Q4_0 (KQ, VQ hold ggml blocks
// of 32 elements: each token slot's row of KVHeads*HeadDim elements is
// Type.RowBytes(KVHeads*HeadDim) bytes, head h's part starting at byte
// Type.RowBytes(h*HeadDim)). Only the slices of the chosen type are set.
type PagedKV struct {
	Type                        KVType
	K16, V16                    []uint16
	K32, V32                    []float32
	KQ, VQ                      []byte
	NumBlocks                   int
	BlockSize, KVHeads, HeadDim int

	rot []float32 // [KVHeads*HeadDim] Store's scratch for rotated rows (quantized types; hadamard.go)
}

// NewPagedKV allocates a zeroed cache of numBlocks pages of type typ. It
// panics on a non-positive size, an unknown type or a head size that is
// not a multiple of the type's block (configuration bugs the caller
// validates: KVType.CheckHeadDim).
func NewPagedKV(numBlocks, blockSize, kvHeads, headDim int, typ KVType) *PagedKV {
	if numBlocks <= 0 || blockSize <= 0 || kvHeads <= 0 || headDim <= 0 {
		panic(fmt.Sprintf("kernels: NewPagedKV(%d blocks, %d slots, %d heads, %d dims): sizes must be positive",
			numBlocks, blockSize, kvHeads, headDim))
	}
	if !typ.Valid() {
		panic(fmt.Sprintf("kernels: NewPagedKV: unknown KV type %d", typ))
	}
	if err := typ.CheckHeadDim(headDim); err != nil {
		panic("kernels: NewPagedKV: " + err.Error())
	}
	kv := &PagedKV{Type: typ, NumBlocks: numBlocks, BlockSize: blockSize, KVHeads: kvHeads, HeadDim: headDim}
	n := numBlocks * blockSize * kvHeads * headDim
	switch typ {
	case KVF16:
		kv.K16, kv.V16 = make([]uint16, n), make([]uint16, n)
	case KVF32:
		kv.K32, kv.V32 = make([]float32, n), make([]float32, n)
	default:
		nb := numBlocks * blockSize * kv.RowBytes()
		kv.KQ, kv.VQ = make([]byte, nb), make([]byte, nb)
		kv.rot = make([]float32, kvHeads*headDim)
	}
	return kv
}

// rowWidth is the number of elements of one token slot: KVHeads*HeadDim.
func (kv *PagedKV) rowWidth() int { return kv.KVHeads * kv.HeadDim }

// RowBytes is the bytes one token slot's keys (or values) take.
func (kv *PagedKV) RowBytes() int { return kv.Type.RowBytes(kv.rowWidth()) }

// BlockBytes is the bytes one page takes, keys and values.
func (kv *PagedKV) BlockBytes() int { return 2 * kv.BlockSize * kv.RowBytes() }

// CopyBlock copies page src's keys and values to page dst (ids in
// [0, NumBlocks), checked by the caller).
func (kv *PagedKV) CopyBlock(src, dst int) {
	n := kv.BlockSize * kv.rowWidth() // elements per block
	s, d := src*n, dst*n
	switch kv.Type {
	case KVF16:
		copy(kv.K16[d:d+n], kv.K16[s:s+n])
		copy(kv.V16[d:d+n], kv.V16[s:s+n])
	case KVF32:
		copy(kv.K32[d:d+n], kv.K32[s:s+n])
		copy(kv.V32[d:d+n], kv.V32[s:s+n])
	default:
		n = kv.BlockSize * kv.RowBytes()
		s, d = src*n, dst*n
		copy(kv.KQ[d:d+n], kv.KQ[s:s+n])
		copy(kv.VQ[d:d+n], kv.VQ[s:s+n])
	}
}

// slot returns the element offset of position pos's token slot through
// blockTable (for quantized types, the slot index times rowWidth: divide
// by rowWidth for the slot), or an error if the table does not cover pos
// or names a block out of range.
func (kv *PagedKV) slot(blockTable []int32, pos int32) (int, error) {
	if pos < 0 {
		return 0, fmt.Errorf("kernels: negative position %d", pos)
	}
	j := int(pos) / kv.BlockSize
	if j >= len(blockTable) {
		return 0, fmt.Errorf("kernels: position %d needs block %d but the block table has %d", pos, j, len(blockTable))
	}
	b := blockTable[j]
	if b < 0 || int(b) >= kv.NumBlocks {
		return 0, fmt.Errorf("kernels: block table entry %d is block %d, outside [0, %d)", j, b, kv.NumBlocks)
	}
	return (int(b)*kv.BlockSize + int(pos)%kv.BlockSize) * kv.rowWidth(), nil
}

// Store writes the keys and values of nTok = len(positions) tokens of one
// sequence into their slots: token t goes to position positions[t] through
// blockTable. k, v: [nTok][KVHeads*HeadDim] (after RoPE for k). With F16
// storage values are rounded to nearest even half; Q8_0 rows are quantized
// as llama.cpp's x86 AVX2 quantize_row_q8_0 (its CPU from_float, which
// ggml_set_rows uses: quant.QuantizeActQ8_0), Q4_0 rows as
// quantize_row_q4_0_ref (quant.QuantizeQ4_0), in blocks of 32 along the
// whole row as llama.cpp's cache rows, after llama.cpp's Walsh-Hadamard
// rotation of each head (hadamard.go: K in chunks of rotK, V of rotV; k
// and v are not modified). Store is not safe for concurrent calls on one
// cache (the rotation's scratch is the cache's). It checks every slot
// before writing any, and returns an error (writing nothing) if a position
// is negative or not covered by blockTable, or k, v are too short.
func (kv *PagedKV) Store(blockTable, positions []int32, k, v []float32) error {
	w := kv.rowWidth()
	if len(k) < len(positions)*w || len(v) < len(positions)*w {
		return fmt.Errorf("kernels: Store of %d tokens needs %d elements each of k and v, have %d and %d",
			len(positions), len(positions)*w, len(k), len(v))
	}
	for _, pos := range positions {
		if _, err := kv.slot(blockTable, pos); err != nil {
			return err
		}
	}
	for t, pos := range positions {
		off, _ := kv.slot(blockTable, pos)
		kr, vr := k[t*w:(t+1)*w], v[t*w:(t+1)*w]
		switch kv.Type {
		case KVF16:
			simd.F32ToF16Row(kr, kv.K16[off:off+w])
			simd.F32ToF16Row(vr, kv.V16[off:off+w])
		case KVF32:
			copy(kv.K32[off:off+w], kr)
			copy(kv.V32[off:off+w], vr)
		default:
			rb := kv.RowBytes()
			o := off / w * rb
			kv.storeQuant(kr, kv.KQ[o:o+rb], kv.rotK())
			kv.storeQuant(vr, kv.VQ[o:o+rb], kv.rotV())
		}
	}
	return nil
}

// storeQuant writes the row x (KVHeads*HeadDim) into dst as the cache's
// quantized type, rotated in chunks of rot elements first (0: as is).
func (kv *PagedKV) storeQuant(x []float32, dst []byte, rot int) {
	if rot > 0 {
		copy(kv.rot, x)
		fwht(kv.rot, rot)
		x = kv.rot
	}
	if kv.Type == KVQ8_0 {
		quantizeActQ8_0(x, dst)
	} else {
		quant.QuantizeQ4_0(x, dst)
	}
}
