package model

import (
	"fmt"

	"kiln/kernels"
)

// KVType is the element type of a KV cache (kernels.KVType), here for
// packages that reach the kernels only through the model (the engine).
type KVType = kernels.KVType

// The cache types: llama.cpp's f16 (the zero value), f32, q8_0 and q4_0.
const (
	KVF16  = kernels.KVF16
	KVF32  = kernels.KVF32
	KVQ8_0 = kernels.KVQ8_0
	KVQ4_0 = kernels.KVQ4_0
)

// KVStore is the paged key/value storage of every layer: NumBlocks pages of
// BlockSize token slots each. It is storage only: which sequence holds which
// block is bookkeeping, decided outside the model (package kvcache); the
// model only reads and writes the pages a Batch's block tables name.
type KVStore struct {
	BlockSize, NumBlocks int
	Type                 kernels.KVType     // element type: F16 (the default, as llama.cpp), F32, Q8_0 or Q4_0
	Layers               []*kernels.PagedKV // [Layers]
}

// KVStoreOptions size a store. Zero values: 16-token blocks, F16 storage.
type KVStoreOptions struct {
	NumBlocks int            // required: total pages
	BlockSize int            // token slots per page; 0 means 16
	Type      kernels.KVType // element type; the zero value is F16
}

// NewKVStore allocates a store for m. A type whose block does not divide
// the model's head size (Q8_0 or Q4_0 with heads not a multiple of 32) is
// an error naming both, as llama.cpp refuses it.
func (m *Model) NewKVStore(o KVStoreOptions) (*KVStore, error) {
	if o.BlockSize == 0 {
		o.BlockSize = 16
	}
	if o.NumBlocks <= 0 || o.BlockSize <= 0 {
		return nil, fmt.Errorf("model: KV store needs a positive block count and size (got %d blocks of %d)", o.NumBlocks, o.BlockSize)
	}
	c := &m.Config
	if err := c.CheckKVType(o.Type); err != nil {
		return nil, err
	}
	kv := &KVStore{BlockSize: o.BlockSize, NumBlocks: o.NumBlocks, Type: o.Type}
	for i := 0; i < c.Layers; i++ {
		kv.Layers = append(kv.Layers, kernels.NewPagedKV(o.NumBlocks, o.BlockSize, c.KVHeads, c.HeadDim, o.Type))
	}
	return kv, nil
}

// CheckKVType returns an error when the model's KV cannot be stored as t:
// an unknown type, or a head size that is not a multiple of t's block.
func (c *Config) CheckKVType(t kernels.KVType) error {
	if !t.Valid() {
		return fmt.Errorf("model: unknown KV cache type %d", t)
	}
	if err := t.CheckHeadDim(c.HeadDim); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// KVBytesPerToken is the cache memory one token slot takes across all
// layers, keys and values, stored as t.
func (c *Config) KVBytesPerToken(t kernels.KVType) int {
	return 2 * c.Layers * c.KVHeads * t.RowBytes(c.HeadDim)
}

// KVBytesPerBlock is the cache memory one block of blockSize token slots
// takes across all layers (keys and values) stored as t: what a pool sized
// from a memory budget divides by.
func (c *Config) KVBytesPerBlock(blockSize int, t kernels.KVType) int {
	return blockSize * c.KVBytesPerToken(t)
}

// BytesPerBlock is the memory one block id takes in kv, over every layer's
// keys and values.
func (kv *KVStore) BytesPerBlock() int {
	n := 0
	for _, l := range kv.Layers {
		n += l.BlockBytes()
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
		l.CopyBlock(src, dst)
	}
	return nil
}
