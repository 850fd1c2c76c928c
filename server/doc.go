// Package server is kiln's OpenAI-compatible HTTP API (`kiln serve`): the
// shapes of OpenAI's API as vLLM serves them, over one engine per loaded
// model, with vLLM's Prometheus metrics.
//
//	POST /v1/completions       prompt: text, texts, token ids, or lists of ids
//	POST /v1/chat/completions  messages rendered with the model's chat template
//	POST /v1/responses         OpenAI's Responses API, stateless (responses.go)
//	GET  /v1/models            the models this server may load
//	POST /v1/completions/render       the token ids a completion would run (vLLM's; llm-d's picker)
//	POST /v1/chat/completions/render  the same for a chat
//	POST /tokenize             {model, prompt | messages} -> token ids
//	POST /detokenize           {model, tokens} -> text
//	GET  /health               200 while the process serves
//	GET  /ready                200 once the preloaded models are loaded
//	GET  /metrics              Prometheus text, vLLM's metric names
//
// Models. A request's "model" names one of the operator's models
// (Config.Models: a --model alias or path, preloaded at start) or a file in
// the hub cache by its `kiln list` reference (hf:OWNER/REPO/FILE); nothing
// else is opened, so a request can never make the server read an arbitrary
// path or download. Models load on first use (one load per model however
// many requests wait for it), at most Config.MaxLoadedModels at once within
// Config.MemoryBudget: to make room the least recently used idle model is
// unloaded; if every loaded model is busy the request gets 503 with
// Retry-After. A model idle for Config.KeepAlive is unloaded (negative: never).
//
// Requests. Bodies are limited to Config.MaxBodyBytes (413 beyond). Fields
// are checked before anything is queued: types, ranges, token ids against
// the vocabulary, and prompt + max_tokens against the model's context
// (400 with OpenAI's error envelope; unknown fields are ignored). At most
// Config.MaxQueue requests may wait for their first token; beyond that the
// answer is 429 with Retry-After. Each request runs under its HTTP
// request's context: a client that disconnects, streaming or not, cancels
// it, and the engine frees its KV blocks within one step.
//
// Structured output (structured.go): response_format json_object or
// json_schema, or vLLM's guided_json / guided_choice / guided_grammar / guided_regex /
// structured_outputs, compiled by package grammar into a token index
// cached per (model, kind, text); each completion samples under its own
// matcher. Keywords the compiler does not enforce are a 400 naming them.
//
// Streaming follows OpenAI's Server-Sent Events framing: one "data: {json}"
// line and a blank line per chunk, flushed at once, ending "data: [DONE]".
// Each write has Config.WriteTimeout to complete; a client that stops
// reading for that long is cut off (and its request aborted).
//
// Shutdown stops accepting connections, lets in-flight requests finish
// until its context ends, then cancels what is left and unloads the models.
package server
