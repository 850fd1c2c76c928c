package model

import (
	"fmt"

	"kiln/kernels"
)

// KVStore is the paged key/value storage of every layer: NumBlocks pages of
// BlockSize token slots each. It is storage only: which sequence holds which
// block is bookkeeping, decided outside the model (package kvcache); the
// model only reads and writes the pages a Batch's block tables name.
type KVStore struct {
	BlockSize, NumBlocks int
	F16                  bool               // element type: F16 (the default, as llama.cpp) or F32
	Layers               []*kernels.PagedKV // [Layers]
}

// KVStoreOptions size a store. Zero values: 16-token blocks, F16 storage.
type KVStoreOptions struct {
	NumBlocks int  // required: total pages
	BlockSize int  // token slots per page; 0 means 16
	F32       bool // store F32 instead of F16
}

// NewKVStore allocates a store for m.
func (m *Model) NewKVStore(o KVStoreOptions) (*KVStore, error) {
	if o.BlockSize == 0 {
		o.BlockSize = 16
	}
	if o.NumBlocks <= 0 || o.BlockSize <= 0 {
		return nil, fmt.Errorf("model: KV store needs a positive block count and size (got %d blocks of %d)", o.NumBlocks, o.BlockSize)
	}
	c := &m.Config
	kv := &KVStore{BlockSize: o.BlockSize, NumBlocks: o.NumBlocks, F16: !o.F32}
	for i := 0; i < c.Layers; i++ {
		kv.Layers = append(kv.Layers, kernels.NewPagedKV(o.NumBlocks, o.BlockSize, c.KVHeads, c.HeadDim, !o.F32))
	}
	return kv, nil
}

// KVBytesPerToken is the cache memory one token slot takes across all layers.
func (c *Config) KVBytesPerToken(f16 bool) int {
	elem := 4
	if f16 {
		elem = 2
	}
	return 2 * c.Layers * c.KVDim() * elem
}

// KVBytesPerBlock is the cache memory one block of blockSize token slots
// takes across all layers (keys and values): what a pool sized from a
// memory budget divides by.
func (c *Config) KVBytesPerBlock(blockSize int, f16 bool) int {
	return blockSize * c.KVBytesPerToken(f16)
}

// BytesPerBlock is the memory one block id takes in kv, over every layer's
// keys and values.
func (kv *KVStore) BytesPerBlock() int {
	elem := 4
	if kv.F16 {
		elem = 2
	}
	n := 0
	for _, l := range kv.Layers {
		n += 2 * l.BlockSize * l.KVHeads * l.HeadDim * elem
	}
	return n
}

// CopyBlock copies block src's keys and values to block dst in every layer
// (the copy in copy-on-write: the block manager hands the caller (src, dst)
// pairs to apply before the step's forward). It writes nothing and returns
// an error if either id is outside [0, NumBlocks).
func (kv *KVStore) CopyBlock(src, dst int) error {
	if src < 0 || src >= kv.NumBlocks || dst < 0 || dst >= kv.NumBlocks {
		return fmt.Errorf("model: CopyBlock(%d, %d) outside the cache's %d blocks", src, dst, kv.NumBlocks)
	}
	if src == dst {
		return nil
	}
	for _, l := range kv.Layers {
		n := l.BlockSize * l.KVHeads * l.HeadDim // elements per block
		s, d := src*n, dst*n
		if l.F16 {
			copy(l.K16[d:d+n], l.K16[s:s+n])
			copy(l.V16[d:d+n], l.V16[s:s+n])
		} else {
			copy(l.K32[d:d+n], l.K32[s:s+n])
			copy(l.V32[d:d+n], l.V32[s:s+n])
		}
	}
	return nil
}
