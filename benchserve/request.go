package benchserve

// Request is one prompt of a benchmark and the output it asks for.
type Request struct {
	// PromptIDs is the prompt as token ids, sent as "prompt": [ids] to
	// /v1/completions (llama-server and vLLM accept it), which makes the
	// input length exact. Nil when the prompt is Text.
	PromptIDs []int
	// Text is the prompt as text (ShareGPT); "" when PromptIDs is set.
	Text string
	// PromptLen is the prompt's length in tokens: exact for PromptIDs, an
	// estimate (bytes/4) for Text. The server's usage.prompt_tokens
	// replaces it in the results when the server reports it.
	PromptLen int
	// OutputLen is max_tokens; with ignore_eos the server generates
	// exactly this many tokens.
	OutputLen int
}
