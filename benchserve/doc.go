// Package benchserve is a load generator for OpenAI-compatible servers
// (kiln serve, llama.cpp's llama-server, vLLM), after "vllm bench serve":
// it sends a dataset of streamed completion requests with a Poisson arrival
// process and a concurrency cap, times every request from the client side,
// and reports vLLM's metrics, table and JSON field names, plus an SVG chart.
//
// Pipeline:
//
//	dataset (RandomDataset | PrefixRepetitionDataset | ShareGPTDataset) -> []Request
//	Run{RequestRate, MaxConcurrency, Seed}.Execute(ctx, *Client, reqs) -> Measurement
//	  Arrivals: offsets 0, +Exp(rate), ... ; a semaphore of MaxConcurrency
//	  slots, taken in arrival order; Client.Do per request in a goroutine
//	Summarize(Measurement, percentiles) -> Result (+ the caller's settings)
//	Result.WriteTable (vLLM's text block), json.Marshal (vLLM's fields),
//	RunChart / SweepChart (SVG)
//
// Every request: POST {"model", "prompt": [ids] or text (or "messages"),
// "max_tokens", "stream": true, "stream_options": {"include_usage": true},
// "ignore_eos": true, "temperature"}. The response is read as server-sent
// events (EventReader) until "data: [DONE]"; each event's data is a JSON
// chunk.
//
// Timing, all client-side with the monotonic clock, from the moment the
// request is sent (after any wait for a concurrency slot):
//
//	TTFT  = first content chunk (a chunk with non-empty text, content or
//	        reasoning; a chat role-only chunk is not content)
//	ITL   = gaps between consecutive content chunks
//	E2EL  = end of the stream ([DONE])
//	TPOT  = (E2EL - TTFT) / (output tokens - 1), output tokens > 1
//
// Output tokens are usage.completion_tokens from the final chunk when the
// server sends it, else the number of content chunks; Result says which
// (OutputTokensSource). Input tokens are usage.prompt_tokens when sent,
// else the dataset's count (exact for token-id prompts).
//
// Failures (connection errors, non-200 statuses with the server's error
// message, error events, malformed chunks, streams cut before [DONE], no
// content chunk, timeouts) are recorded per request and counted as failed;
// they never stop a run.
package benchserve
