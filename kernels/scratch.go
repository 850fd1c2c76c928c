package kernels

// scratch is the working memory a Pool's operations reuse from call to
// call, so that the hot path allocates nothing in steady state. It is only
// touched while the Pool's lock is held.
type scratch struct {
	acts     [][]byte            // MatMul: activations converted to each vec_dot_type of a call, [m][rowBytes]
	mmOps    []mmOp              // MatMul: the matrices of the current call
	idConv   []idConv            // MulMatID: the conversions of the current call
	one      [1]MatMulOp         // MatMul: its single op, without allocating a slice
	tokSeq   []int32             // Attention: [numTokens] sequence of each token
	attnWork [][]float32         // Attention: [threads][...] per-worker q, acc, scores, max, sum
	attnQ    [][]byte            // Attention over a quantized cache: [threads][Q8_0 row] per-worker quantized query
	attnTile []attnTileScratch   // Attention over a Q8_0 cache by tiles: [threads]
	out4     []float32           // MatMul: [threads][16] per-worker results of 4-row dots
	gemm     [][]byte            // MatMul: [threads][simd.GemmScratchBytes] per-worker GEMM panels
	mmNext   map[*Matrix]*Matrix // MatMul, m = 1: the matrix that followed each one last time
	mmLast   *Matrix             // MatMul, m = 1: the previous call's (first) matrix

	// Task structs live here so that dispatching them allocates nothing
	// (a pointer to a field converts to a Task interface without escaping).
	mm   matmulTask
	conv convTask
	attn attnTask
	norm normTask
	silu siluTask
}

// actBuf returns the k-th activation buffer with length n, growing it if
// needed.
func (s *scratch) actBuf(k, n int) []byte {
	for len(s.acts) <= k {
		s.acts = append(s.acts, nil)
	}
	if cap(s.acts[k]) < n {
		s.acts[k] = make([]byte, n)
	}
	return s.acts[k][:n]
}

// gemmBufs returns threads GEMM scratch buffers of at least n bytes each.
func (s *scratch) gemmBufs(threads, n int) [][]byte {
	if len(s.gemm) < threads {
		s.gemm = make([][]byte, threads)
	}
	for i := range s.gemm[:threads] {
		if len(s.gemm[i]) < n {
			s.gemm[i] = make([]byte, n)
		}
	}
	return s.gemm[:threads]
}
