package benchserve

import "time"

// Output is what the client saw of one request.
type Output struct {
	// Success is false when the request failed; Error says why.
	Success bool
	Error   string
	// Start is when the request was sent (after any wait for a
	// concurrency slot).
	Start time.Time
	// TTFT is the time from Start to the first content chunk.
	TTFT time.Duration
	// ITL holds the gaps between consecutive content chunks (Chunks-1 of
	// them). A server that sends several tokens in one chunk makes fewer,
	// longer gaps, as in vLLM's benchmark.
	ITL []time.Duration
	// Latency is the end-to-end time from Start to the end of the stream.
	Latency time.Duration
	// Chunks counts the content chunks: those carrying non-empty text.
	Chunks int
	// OutputTokens is usage.completion_tokens from the final chunk when
	// UsageReported, else Chunks.
	OutputTokens  int
	UsageReported bool
	// PromptLen is usage.prompt_tokens when the server reported it, else
	// the request's PromptLen.
	PromptLen int
}

// TPOT is the time per output token after the first, (Latency-TTFT) /
// (OutputTokens-1), and false when there is at most one output token.
func (o *Output) TPOT() (time.Duration, bool) {
	if !o.Success || o.OutputTokens <= 1 {
		return 0, false
	}
	return (o.Latency - o.TTFT) / time.Duration(o.OutputTokens-1), true
}
