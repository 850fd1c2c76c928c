package kernels

// scratch is the working memory a Pool's operations reuse from call to
// call, so that the hot path allocates nothing in steady state. It is only
// touched while the Pool's lock is held.
type scratch struct {
	act      []byte      // MatMul: activations converted to the vec_dot_type, [m][rowBytes]
	tokSeq   []int32     // Attention: [numTokens] sequence of each token
	attnWork [][]float32 // Attention: [threads][...] per-worker q, acc, scores, max, sum
	out4     []float32   // MatMul: [threads][16] per-worker results of 4-row dots

	// Task structs live here so that dispatching them allocates nothing
	// (a pointer to a field converts to a Task interface without escaping).
	mm   matmulTask
	conv convTask
	attn attnTask
	norm normTask
}

// bytes returns a scratch byte slice of length n, growing it if needed.
func (s *scratch) bytes(n int) []byte {
	if cap(s.act) < n {
		s.act = make([]byte, n)
	}
	return s.act[:n]
}
