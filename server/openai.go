package server

import "encoding/json"

// The wire types of OpenAI's API as vLLM serves it. Requests keep absent
// fields distinguishable (pointers) so defaults apply only to what the
// client left out; responses carry exactly OpenAI's field names.

// samplingRequest holds the fields completions and chat share.
type samplingRequest struct {
	Model               string             `json:"model"`
	MaxTokens           *int               `json:"max_tokens"`
	MaxCompletionTokens *int               `json:"max_completion_tokens"`
	Temperature         *float64           `json:"temperature"`
	TopP                *float64           `json:"top_p"`
	TopK                *int               `json:"top_k"`
	MinP                *float64           `json:"min_p"`
	PresencePenalty     *float64           `json:"presence_penalty"`
	FrequencyPenalty    *float64           `json:"frequency_penalty"`
	RepetitionPenalty   *float64           `json:"repetition_penalty"`
	Seed                *int64             `json:"seed"`
	Stop                json.RawMessage    `json:"stop"` // null, a string or a list of strings
	StopTokenIDs        []int32            `json:"stop_token_ids"`
	N                   *int               `json:"n"`
	LogitBias           map[string]float64 `json:"logit_bias"`
	IgnoreEOS           bool               `json:"ignore_eos"`
	User                string             `json:"user"`
	Stream              bool               `json:"stream"`
	StreamOptions       *streamOptions     `json:"stream_options"`
	Priority            int                `json:"priority"`        // vLLM's extra: lower runs first
	UseBeamSearch       bool               `json:"use_beam_search"` // vLLM's extra: beam search of width max(n, best_of)
	LengthPenalty       *float64           `json:"length_penalty"`  // beam search's length exponent (1)
	PromptLogprobs      *int               `json:"prompt_logprobs"` // vLLM's extra: /v1/completions only (echo.go)
	structuredRequest
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type completionRequest struct {
	samplingRequest
	Prompt   json.RawMessage `json:"prompt"` // a string, strings, token ids, or lists of token ids
	Logprobs *int            `json:"logprobs"`
	Echo     bool            `json:"echo"`
	Suffix   *string         `json:"suffix"`
	BestOf   *int            `json:"best_of"`
}

type chatRequest struct {
	samplingRequest
	Messages             []chatMessage   `json:"messages"`
	Logprobs             bool            `json:"logprobs"`
	TopLogprobs          *int            `json:"top_logprobs"`
	AddGenerationPrompt  *bool           `json:"add_generation_prompt"`  // vLLM's extra, default true
	ContinueFinalMessage bool            `json:"continue_final_message"` // vLLM's extra (continue.go)
	ChatTemplateKwargs   map[string]any  `json:"chat_template_kwargs"`   // vLLM's extra: template variables
	Tools                json.RawMessage `json:"tools"`
	ToolChoice           json.RawMessage `json:"tool_choice"`
	ParallelToolCalls    *bool           `json:"parallel_tool_calls"` // false: at most one call (absent or true: at most maxToolCalls)
}

type chatMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string, null, or a list of content parts
	Name      string          `json:"name"`
	ToolCalls json.RawMessage `json:"tool_calls"` // assistant turns: null or a list of calls (checkToolCalls)
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// usage is OpenAI's token accounting; cached_tokens comes from the prefix cache.
type usage struct {
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	TotalTokens         int            `json:"total_tokens"`
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Completions (text_completion).

type completionResponse struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"` // text_completion
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   *usage             `json:"usage,omitempty"`
}

type completionChoice struct {
	Index        int                 `json:"index"`
	Text         string              `json:"text"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
	// PromptLogprobs is vLLM's prompt_logprobs: null first, then per
	// prompt token {token id: promptLogprob}; absent unless asked.
	PromptLogprobs []map[string]promptLogprob `json:"prompt_logprobs,omitempty"`
}

// completionLogprobs is the legacy completions shape: parallel lists. With
// echo they begin with the prompt's tokens, the first one's logprob and
// top_logprobs null.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float32           `json:"token_logprobs"`
	TopLogprobs   []map[string]float32 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// Chat completions.

type chatResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"` // chat.completion or chat.completion.chunk
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *usage       `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      *chatMessageOut `json:"message,omitempty"` // whole responses
	Delta        *chatOut        `json:"delta,omitempty"`   // stream chunks
	Logprobs     *chatLogprobs   `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

// chatMessageOut is a whole response's message: content is always
// present, null beside tool calls (as OpenAI sends it; clients such as
// the Python SDK read message.content without checking for the key).
type chatMessageOut struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

// chatOut is a stream chunk's delta: only what changed.
type chatOut struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
}

type chatTokenLogprob struct {
	Token       string           `json:"token"`
	Logprob     float32          `json:"logprob"`
	Bytes       []int            `json:"bytes"`
	TopLogprobs []chatTopLogprob `json:"top_logprobs"`
}

type chatTopLogprob struct {
	Token   string  `json:"token"`
	Logprob float32 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// Models.

type modelList struct {
	Object string      `json:"object"` // list
	Data   []modelCard `json:"data"`
}

type modelCard struct {
	ID          string `json:"id"`
	Object      string `json:"object"` // model
	Created     int64  `json:"created"`
	OwnedBy     string `json:"owned_by"`
	Root        string `json:"root,omitempty"`
	MaxModelLen int    `json:"max_model_len,omitempty"` // known once loaded
	Loaded      bool   `json:"loaded"`
}

// Tokenize / detokenize (vLLM's shapes).

type tokenizeRequest struct {
	Model                string          `json:"model"`
	Prompt               *string         `json:"prompt"`
	Messages             []chatMessage   `json:"messages"`
	AddSpecialTokens     *bool           `json:"add_special_tokens"`
	AddGenerationPrompt  *bool           `json:"add_generation_prompt"`
	ContinueFinalMessage bool            `json:"continue_final_message"`
	ReturnTokenStrs      bool            `json:"return_token_strs"`
	ChatTemplateKwargs   map[string]any  `json:"chat_template_kwargs"`
	Tools                json.RawMessage `json:"tools"`
}

type tokenizeResponse struct {
	Count       int      `json:"count"`
	MaxModelLen int      `json:"max_model_len"`
	Tokens      []int32  `json:"tokens"`
	TokenStrs   []string `json:"token_strs,omitempty"`
}

type detokenizeRequest struct {
	Model  string  `json:"model"`
	Tokens []int32 `json:"tokens"`
}

type detokenizeResponse struct {
	Prompt string `json:"prompt"`
}
