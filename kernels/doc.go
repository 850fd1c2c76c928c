// Package kernels is kiln's compute layer: the operations a transformer
// forward pass is made of, over whole batches, on a pool of worker threads.
//
// It owns:
//
//	Pool        persistent workers, a parallel-for that allocates nothing (pool.go)
//	MatMul      quantized weight matrix × batch of activation rows (matmul.go, vecdot.go)
//	Repack      Q8_0/Q4_0 matrices rewritten once at load into the GEMM panels, Q4_K rows as one stream (repack.go)
//	Matrix.Row  embedding lookup (matrix.go)
//	RMSNorm     per-row RMS norm (norm.go)
//	RoPE        rotary position embedding, normal and neox layouts, linear/llama3/YaRN scaling (rope.go)
//	SiLUMul, Add, AddBias, Softmax (activation.go, softmax.go)
//	PagedKV     one layer's paged K/V cache (pagedkv.go)
//	Attention   causal GQA attention of a ragged batch through block tables (attention.go)
//
// The per-block dot products, GEMM micro-kernels and small vector loops
// come from kernels/simd; block layouts and dequantizers from quant.
// Numerics follow llama.cpp's CPU backend (AVX2 build) bit for bit:
// activation quantization to the weight's vec_dot_type, the summation order
// of each weight type's matrix product (chosen per matrix shape as
// llama.cpp does: vecDotFor), RMS norm's float64 sums, RoPE with glibc's
// sincosf and logf, tiled flash attention, ggml's exp, so that kiln's next-token
// distributions equal llama.cpp's (model's TestOracleAgreement: ~1e-7).
//
// # Invariants
//
//   - Batch invariance: every output row of MatMul and Attention is computed
//     by the same code in the same order whatever the batch size and
//     whichever worker runs it, so a token's result does not depend on what
//     it is batched with.
//   - The hot path allocates nothing in steady state: a Pool keeps its
//     scratch (converted activations, attention buffers, task structs) and
//     reuses it (checked with testing.AllocsPerRun).
//   - One operation runs on a Pool at a time (its lock), so a Pool can be
//     shared, but operations on it do not overlap.
//   - Shapes are checked on entry. Kernels without an error result panic with
//     a "kernels: ..." message on a shape that is a caller bug; inputs that
//     come from other components at run time (block tables, positions) are
//     reported as errors by Attention and PagedKV.Store before anything is
//     written.
//
// # Layouts
//
// A weight matrix is GGUF's: Rows rows of Cols elements, Cols the input
// features. MatMul converts x's rows, then hands weight rows to the
// workers in guided chunks (multiples of 16 rows, large first):
//
//	x [m][Cols] --convert--> xq [m][RowBytes(Cols) of vec_dot_type] (--prepare--> GEMM rows)
//	W rows  [chunk 0          ][chunk 1     ][c2 ][c3] ...
//	  GEMM types, m >= threshold: 8/16-row panels repacked in L2, register
//	                              tiles of panel rows x 1..4 activation rows
//	  m = 1:                      8-row decode kernels reading W in place
//	                              (prefetching ahead), or 4-row float dots
//	  repacked (Q8_0, Q4_0, Q4_K): the GEMM kernels on panels built at load,
//	                              every m (decode: one contiguous stream)
//	  otherwise:                  sub-tiles of ~16 KiB hot in L1 while every
//	                              activation row passes (4-row dots where simd
//	                              has them)
//	dst[i*Rows + r] = dot(W[r], xq[i])     same bits whichever kernel ran it
//
// The KV cache is paged; a sequence's block table maps its positions to
// pages:
//
//	position pos -> block table entry j = pos / BlockSize, slot s = pos % BlockSize
//	K[((table[j]*BlockSize + s)*KVHeads + g)*HeadDim + d]      (V alike)
//
//	 seq A table [7 2 5]:  pos 0..15 -> page 7, 16..31 -> page 2, 32.. -> page 5
//
// Attention's work items are (run, KV head) pairs over all sequences, a
// run being up to 16 consecutive tokens of one sequence:
//
//	item = run*KVHeads + g  ->  query heads g*G .. g*G+G-1, G = Heads/KVHeads
package kernels
