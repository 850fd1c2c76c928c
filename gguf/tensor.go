package gguf

import (
	"fmt"
	"math"
)

// maxDims is GGML_MAX_DIMS: a ggml tensor has at most 4 dimensions.
const maxDims = 4

// maxNameLen is GGML_MAX_NAME minus its NUL: llama.cpp refuses longer
// tensor names, so this package neither reads nor writes them.
const maxNameLen = 63

// TensorInfo is one entry of the tensor directory.
type TensorInfo struct {
	Name   string
	Shape  []uint64 // ggml order: Shape[0] is the contiguous dimension (row length); 1..4 dims
	Type   Type
	Offset uint64 // byte offset from the start of the data section; a multiple of the file's alignment
	Size   uint64 // bytes of data: Elements()/Type.BlockSize()*Type.BlockBytes()
}

// Elements is the number of elements: the product of Shape (1 for no dims).
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// tensorSize checks a tensor's type and shape the way llama.cpp does and
// returns its size in bytes: 1..4 dims, each < 2^63, element count < 2^63,
// row length (Shape[0]) a multiple of the type's block size.
func tensorSize(typ Type, shape []uint64) (uint64, error) {
	if !typ.Known() {
		return 0, fmt.Errorf("unknown ggml tensor type %d (this build knows F32, F16, BF16, Q*_0/1, Q*_K, IQ*, TQ*, MXFP4...; a newer llama.cpp type?)", uint32(typ))
	}
	if len(shape) < 1 || len(shape) > maxDims {
		return 0, fmt.Errorf("%d dimensions, want 1 to %d", len(shape), maxDims)
	}
	n := uint64(1)
	for i, d := range shape {
		if d > math.MaxInt64 {
			return 0, fmt.Errorf("dimension %d is %d, more than 2^63-1", i, d)
		}
		if d != 0 && n > (math.MaxInt64-1)/d {
			return 0, fmt.Errorf("shape %v has 2^63 or more elements", shape)
		}
		n *= d
	}
	bs, bb := uint64(typ.BlockSize()), uint64(typ.BlockBytes())
	if shape[0]%bs != 0 {
		return 0, fmt.Errorf("row length %d is not a multiple of %s's block size %d", shape[0], typ, bs)
	}
	if n/bs > math.MaxInt64/bb {
		return 0, fmt.Errorf("shape %v of %s is 2^63 bytes or more", shape, typ)
	}
	return n / bs * bb, nil
}
