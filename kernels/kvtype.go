package kernels

import (
	"fmt"
	"strings"
)

// KVType is the element type of a paged KV cache (PagedKV): llama.cpp's
// cache types (-ctk/-ctv) for K and V together. The zero value is F16,
// llama.cpp's default.
type KVType uint8

const (
	KVF16  KVType = iota // IEEE half, rounded to nearest even
	KVF32                // float32 as computed
	KVQ8_0               // blocks of 32: f16 scale + 32 int8 (34 bytes), written as llama.cpp's AVX2 quantize_row_q8_0
	KVQ4_0               // blocks of 32: f16 scale + 16 bytes of nibbles (18 bytes), written as quantize_row_q4_0_ref
	numKVTypes
)

var kvTypeNames = [numKVTypes]string{"f16", "f32", "q8_0", "q4_0"}

// KVTypeNames lists the cache types ParseKVType accepts, in declaration
// order ("f16", "f32", "q8_0", "q4_0").
func KVTypeNames() []string { return kvTypeNames[:] }

// ParseKVType reads a cache type name, case-insensitively ("q8_0", "Q4_0",
// "f16"); an unknown name is an error that lists the types.
func ParseKVType(s string) (KVType, error) {
	for i, n := range kvTypeNames {
		if strings.EqualFold(s, n) {
			return KVType(i), nil
		}
	}
	return 0, fmt.Errorf("unknown KV cache type %q (want one of %s)", s, strings.Join(kvTypeNames[:], ", "))
}

// String is the type's llama.cpp name: "f16", "f32", "q8_0" or "q4_0".
func (t KVType) String() string {
	if t < numKVTypes {
		return kvTypeNames[t]
	}
	return fmt.Sprintf("KVType(%d)", uint8(t))
}

// Valid reports whether t is one of the declared types.
func (t KVType) Valid() bool { return t < numKVTypes }

// Quantized reports whether rows are stored in 32-element blocks.
func (t KVType) Quantized() bool { return t == KVQ8_0 || t == KVQ4_0 }

// BlockElems is the number of elements one storage block holds: 32 for
// the quantized types, 1 for F16 and F32. A cache row (KVHeads*HeadDim)
// and each head's part of it must be a whole number of blocks.
func (t KVType) BlockElems() int {
	if t.Quantized() {
		return 32
	}
	return 1
}

// blockBytes is the bytes one storage block takes.
func (t KVType) blockBytes() int {
	switch t {
	case KVF32:
		return 4
	case KVQ8_0:
		return 34
	case KVQ4_0:
		return 18
	}
	return 2
}

// RowBytes is the bytes n elements take (n a multiple of BlockElems).
func (t KVType) RowBytes(n int) int { return n / t.BlockElems() * t.blockBytes() }

// CheckHeadDim returns an error naming both numbers when heads of headDim
// elements cannot be stored as t (not a multiple of its block): llama.cpp
// refuses such a cache too.
func (t KVType) CheckHeadDim(headDim int) error {
	if be := t.BlockElems(); headDim%be != 0 {
		return fmt.Errorf("KV cache type %s stores blocks of %d elements, but this model's heads are %d wide (not a multiple of %d); use f16 or f32", t, be, headDim, be)
	}
	return nil
}
