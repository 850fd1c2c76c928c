// Package gguf reads and writes GGUF files (versions 2 and 3, little-endian):
// the header, typed metadata, the tensor directory and the aligned tensor
// data. It owns the file format only; what the tensors mean belongs to
// quant (block layouts) and model (architectures).
//
// Layout (all integers little-endian; string = uint64 length + bytes):
//
//	offset 0   "GGUF"  uint32 version  uint64 n_tensors  uint64 n_kv
//	           n_kv x   { string key; uint32 value_type; value }
//	           n_tensors x { string name; uint32 n_dims; uint64 dims[n_dims];
//	                         uint32 ggml_type; uint64 offset }
//	           zero padding up to a multiple of Alignment (only when n_tensors > 0)
//	DataOffset tensor data: tensor i at DataOffset + Tensors[i].Offset,
//	           Tensors[i].Size bytes, each padded to Alignment
//
//	value  = scalar (1, 2, 4 or 8 bytes; bool is one byte 0/1) | string
//	       | array: uint32 elem_type; uint64 n; n values of elem_type
//	         (elem_type may be array again: arrays of arrays)
//
//	+--------+---------------+-----------------+---------+-----------------------+
//	| header | metadata KV…  | tensor infos…   | padding | t0 pad | t1 pad | …   |
//	+--------+---------------+-----------------+---------+-----------------------+
//	                                           ^ DataOffset, a multiple of Alignment
//
// Shapes are in ggml order: Shape[0] is the contiguous dimension (the row
// length) and must be a multiple of the type's block size; the byte size is
// Elements()/BlockSize()*BlockBytes(). A [n_embd, n_vocab] embedding is
// n_vocab rows of n_embd elements.
//
// Reading. Open maps the file read-only (ReadFile where mmap is not wired
// up); Parse reads an in-memory image. Metadata is copied onto the Go heap and
// outlives Close; Data returns sub-slices of the mapping that must not be
// used after Close.
//
// Invariants of a File returned by Open or Parse:
//   - every count, length and offset was checked against the bytes remaining
//     before anything was allocated for it, so hostile input yields a
//     *FormatError (errors.Is ErrNotGGUF, ErrUnsupported, ErrTruncated or
//     ErrInvalid), never a panic or an allocation beyond a small multiple of
//     the file's size;
//   - keys are non-empty and unique; tensor names are non-empty, unique and
//     at most 63 bytes (llama.cpp's limit); array nesting is below 8 levels;
//   - Alignment is general.alignment (a uint32 power of two) or 32;
//   - each tensor has 1..4 dims (a 0-dim entry reads as shape [1]), a known
//     type, fewer than 2^63 elements and bytes, an aligned offset, and data
//     inside the file that overlaps no other tensor's. Unlike llama.cpp the
//     reader does not insist that offsets follow directory order.
//
// Writing. Writer emits version 3 in llama.cpp's exact layout (offsets
// consecutive in directory order, every tensor padded), deterministically.
// AddTensorFunc streams tensor data at write time, so a model need never be
// held in memory whole.
package gguf
