// Package safetensors reads Hugging Face .safetensors files: an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then the tensor bytes. Files are mapped read-only;
// tensor data are views into the mapping. Sharded checkpoints are read
// through model.safetensors.index.json (OpenDir).
//
// Every header is validated before any tensor is handed out, as package gguf
// does for GGUF: the header length, each dtype, shape and byte range
// (in range, sized dtype*elements, not overlapping another tensor), and
// duplicate names. A bad file gives an error naming the file and the field,
// never a panic.
package safetensors
