package model

import (
	"fmt"

	"kiln/kernels"
)

// KVCache is the paged key/value storage of every layer: NumBlocks pages of
// BlockSize token slots each. Which sequence owns which block is decided
// outside the model (package kvcache); the model only reads and writes the
// pages a Batch's block tables name.
type KVCache struct {
	BlockSize, NumBlocks int
	F16                  bool               // element type: F16 (the default, as llama.cpp) or F32
	Layers               []*kernels.PagedKV // [Layers]
}

// KVCacheOptions size a cache. Zero values: 16-token blocks, F16 storage.
type KVCacheOptions struct {
	NumBlocks int  // required: total pages
	BlockSize int  // token slots per page; 0 means 16
	F32       bool // store F32 instead of F16
}

// NewKVCache allocates a cache for m.
func (m *Model) NewKVCache(o KVCacheOptions) (*KVCache, error) {
	if o.BlockSize == 0 {
		o.BlockSize = 16
	}
	if o.NumBlocks <= 0 || o.BlockSize <= 0 {
		return nil, fmt.Errorf("model: KV cache needs a positive block count and size (got %d blocks of %d)", o.NumBlocks, o.BlockSize)
	}
	c := &m.Config
	kv := &KVCache{BlockSize: o.BlockSize, NumBlocks: o.NumBlocks, F16: !o.F32}
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
