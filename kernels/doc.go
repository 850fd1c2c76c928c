// Package kernels is kiln's compute layer: the operations a transformer
// forward pass is made of, over whole batches, on a pool of worker threads.
//
// It owns:
//
//	Pool        persistent workers, a parallel-for that allocates nothing (pool.go)
//	MatMul      quantized weight matrix × batch of activation rows (matmul.go, vecdot.go)
//	Matrix.Row  embedding lookup (matrix.go)
//	RMSNorm     per-row RMS norm (norm.go)
//	RoPE        rotary position embedding, normal and neox layouts (rope.go)
//	SiLUMul, Add, AddBias, Softmax (activation.go, softmax.go)
//	PagedKV     one layer's paged K/V cache (pagedkv.go)
//	Attention   causal GQA attention of a ragged batch through block tables (attention.go)
//
// The per-block dot products and small vector loops come from kernels/simd;
// block layouts and dequantizers from quant. Numerics follow llama.cpp's CPU
// backend where that is cheap (activation quantization to the weight's
// vec_dot_type, float64 sums in RMS norm, float32 RoPE angles, ggml's exp
// approximation), because kiln's next-token distributions are checked
// against llama.cpp's.
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
// features. MatMul converts x's rows, then tiles the weight rows:
//
//	x [m][Cols] --convert--> xq [m][RowBytes(Cols) of vec_dot_type]
//	                              |
//	W rows  [chunk 0      ][chunk 1      ] ...   chunks of rows, handed out to workers
//	         [sub][sub][sub]                      sub-tiles of ~16 KiB, hot in L1 while
//	                                              every activation row passes over them:
//	           dst[i*Rows + r] = dot(W[r], xq[i])    (4 rows of xq per call where simd
//	                                                  has a bit-identical 4-row dot)
//
// The KV cache is paged; a sequence's block table maps its positions to
// pages:
//
//	position pos -> block table entry j = pos / BlockSize, slot s = pos % BlockSize
//	K[((table[j]*BlockSize + s)*KVHeads + g)*HeadDim + d]      (V alike)
//
//	 seq A table [7 2 5]:  pos 0..15 -> page 7, 16..31 -> page 2, 32.. -> page 5
//
// Attention's work items are (token, KV head) pairs over all sequences:
//
//	item = token*KVHeads + g  ->  query heads g*G .. g*G+G-1, G = Heads/KVHeads
package kernels
