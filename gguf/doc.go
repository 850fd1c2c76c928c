// Package gguf reads and writes GGUF files (versions 2 and 3): the header,
// typed metadata, the tensor directory and the aligned tensor data.
//
// A file is mapped read-only; tensor data is handed out as sub-slices of the
// mapping, never copied onto the Go heap. Every count and offset read from a
// file is checked against the file's size before it is used, so a truncated or
// hostile file yields an error, never a panic or a huge allocation.
//
//	+--------+---------------+-----------------+---------+-----------------+
//	| header | metadata KV…  | tensor infos…   | padding | tensor data …   |
//	+--------+---------------+-----------------+---------+-----------------+
//	                                           ^ aligned to general.alignment
package gguf
