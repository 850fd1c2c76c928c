package kernels

import (
	"fmt"

	"kiln/kernels/simd"
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
// Storage is F16 (K16, V16 hold IEEE half bits, like llama.cpp's default
// cache) or F32 (K32, V32). Only the slices of the chosen type are set.
type PagedKV struct {
	F16                         bool
	K16, V16                    []uint16
	K32, V32                    []float32
	NumBlocks                   int
	BlockSize, KVHeads, HeadDim int
}

// NewPagedKV allocates a zeroed cache of numBlocks pages. It panics on a
// non-positive size (a configuration bug the caller validates).
func NewPagedKV(numBlocks, blockSize, kvHeads, headDim int, f16 bool) *PagedKV {
	if numBlocks <= 0 || blockSize <= 0 || kvHeads <= 0 || headDim <= 0 {
		panic(fmt.Sprintf("kernels: NewPagedKV(%d blocks, %d slots, %d heads, %d dims): sizes must be positive",
			numBlocks, blockSize, kvHeads, headDim))
	}
	kv := &PagedKV{F16: f16, NumBlocks: numBlocks, BlockSize: blockSize, KVHeads: kvHeads, HeadDim: headDim}
	n := numBlocks * blockSize * kvHeads * headDim
	if f16 {
		kv.K16, kv.V16 = make([]uint16, n), make([]uint16, n)
	} else {
		kv.K32, kv.V32 = make([]float32, n), make([]float32, n)
	}
	return kv
}

// rowWidth is the number of elements of one token slot: KVHeads*HeadDim.
func (kv *PagedKV) rowWidth() int { return kv.KVHeads * kv.HeadDim }

// slot returns the element offset of position pos's token slot through
// blockTable, or an error if the table does not cover pos or names a block
// out of range.
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
// storage values are rounded to nearest even half. It checks every slot
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
		if kv.F16 {
			simd.F32ToF16Row(kr, kv.K16[off:off+w])
			simd.F32ToF16Row(vr, kv.V16[off:off+w])
		} else {
			copy(kv.K32[off:off+w], kr)
			copy(kv.V32[off:off+w], vr)
		}
	}
	return nil
}
