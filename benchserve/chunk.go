package benchserve

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// chunk is one streamed JSON object of an OpenAI-compatible server, the
// fields of /v1/completions ("text") and /v1/chat/completions ("delta")
// together:
//
//	{"choices":[{"text":"..","finish_reason":null}]}
//	{"choices":[{"delta":{"content":".."},"finish_reason":null}]}
//	{"choices":[],"usage":{"prompt_tokens":128,"completion_tokens":64}}
//	{"error":{"message":"..","type":".."}}
type chunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content string `json:"content"`
			// Reasoning models stream their thinking in one of these
			// (vLLM, llama-server); it is generated output too.
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// content reports whether the chunk carries generated text: a choice with
// non-empty text, content or reasoning. Role-only first chunks of the chat
// endpoint and the empty chunk that carries finish_reason do not count.
func (c *chunk) content() bool {
	for _, ch := range c.Choices {
		if ch.Text != "" || ch.Delta.Content != "" || ch.Delta.ReasoningContent != "" || ch.Delta.Reasoning != "" {
			return true
		}
	}
	return false
}

// parseChunk decodes one event's data.
func parseChunk(data string) (*chunk, error) {
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return nil, fmt.Errorf("malformed chunk %s: %v", clip(data, 120), err)
	}
	return &c, nil
}

// errorMessage renders an OpenAI-style error value: an object with a
// "message" (and maybe "type" or "code"), a bare string, or anything else
// as its JSON text.
func errorMessage(raw json.RawMessage) string {
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		if obj.Type != "" {
			return obj.Type + ": " + obj.Message
		}
		return obj.Message
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s
	}
	return clip(string(raw), 200)
}

// bodyError renders the body of a failed HTTP response or an error event:
// the message of an OpenAI-style {"error": {...}} or of a bare error
// object, FastAPI's "detail" (vLLM's validation errors), else the text
// itself, clipped.
func bodyError(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil {
		switch {
		case len(e.Error) > 0 && string(e.Error) != "null":
			return errorMessage(e.Error)
		case e.Message != "":
			return errorMessage(body)
		case len(e.Detail) > 0:
			return clip(string(e.Detail), 200)
		}
	}
	return clip(strings.TrimSpace(string(body)), 200)
}

// clip shortens s to at most n bytes for an error message, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
