package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"kiln/engine"
)

// The Responses API's response object and its output items, built from a
// finished chat reply (chatWriter's state, one choice).

// responseObject is OpenAI's "response": the reply's output items, its
// usage, and the request's settings echoed (the SDKs read them as required
// fields).
type responseObject struct {
	ID                 string             `json:"id"` // resp_...
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"` // Unix seconds
	Status             string             `json:"status"`     // in_progress, completed, incomplete
	Error              *errorBody         `json:"error"`      // always null: failures are error envelopes or events
	IncompleteDetails  *incompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	Model              string             `json:"model"`
	Output             []any              `json:"output"` // messageItem, functionCallItem
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Store              bool               `json:"store"` // false: nothing is stored
	Background         bool               `json:"background"`
	Temperature        float64            `json:"temperature"`
	TopP               float64            `json:"top_p"`
	Text               responseText       `json:"text"`
	ToolChoice         json.RawMessage    `json:"tool_choice"`
	Tools              json.RawMessage    `json:"tools"`
	Truncation         string             `json:"truncation"` // disabled: a prompt too long is a 400
	Metadata           map[string]string  `json:"metadata"`
	User               *string            `json:"user,omitempty"`
	Usage              *responseUsage     `json:"usage"` // null until the reply ends
}

type incompleteDetails struct {
	Reason string `json:"reason"` // max_output_tokens
}

type responseUsage struct {
	InputTokens         int          `json:"input_tokens"`
	InputTokensDetails  inputDetails `json:"input_tokens_details"`
	OutputTokens        int          `json:"output_tokens"`
	OutputTokensDetails outDetails   `json:"output_tokens_details"`
	TotalTokens         int          `json:"total_tokens"`
}

type inputDetails struct {
	CachedTokens int `json:"cached_tokens"` // from the prefix cache
}

type outDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"` // always 0: no reasoning is split out
}

// messageItem is an assistant message output item.
type messageItem struct {
	Type    string       `json:"type"` // message
	ID      string       `json:"id"`   // msg_...
	Status  string       `json:"status"`
	Role    string       `json:"role"` // assistant
	Content []outputText `json:"content"`
}

// outputText is a message's output_text content part.
type outputText struct {
	Type        string `json:"type"` // output_text
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"` // always []
	Logprobs    []any  `json:"logprobs"`    // always []
}

func newOutputText(text string) outputText {
	return outputText{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
}

// functionCallItem is a function call output item; the client runs it and
// sends back a function_call_output with its call_id.
type functionCallItem struct {
	Type      string `json:"type"` // function_call
	ID        string `json:"id"`   // fc_...
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text
	Status    string `json:"status"`
}

// responsesWriter answers one /v1/responses request from the chat reply
// chatWriter c folds the engine's events into.
type responsesWriter struct {
	c       *chatWriter
	q       *responsesRequest
	id      string
	created int64
	msgID   string // the message item's id, once it has one
	seq     int    // the next stream event's sequence_number
}

// object is the response object with status and output; usage once done.
func (rw *responsesWriter) object(status string, output []any) responseObject {
	q, p := rw.q, rw.c.j.params
	o := responseObject{ID: rw.id, Object: "response", CreatedAt: rw.created, Status: status, Instructions: q.Instructions,
		MaxOutputTokens: q.MaxOutputTokens, Model: q.Model, Output: output, ParallelToolCalls: q.ParallelToolCalls == nil || *q.ParallelToolCalls,
		Temperature: float64(p.Temperature), TopP: float64(p.TopP), ToolChoice: q.ToolChoice, Tools: q.Tools,
		Truncation: "disabled", Metadata: q.Metadata, User: q.User}
	if q.Temperature != nil { // as sent, not as float32 made it
		o.Temperature = *q.Temperature
	}
	if q.TopP != nil {
		o.TopP = *q.TopP
	}
	if o.Output == nil {
		o.Output = []any{}
	}
	if q.Text != nil && !isNull(q.Text.Format) {
		o.Text = *q.Text
	} else {
		o.Text.Format = json.RawMessage(`{"type":"text"}`)
	}
	if isNull(o.ToolChoice) {
		o.ToolChoice = json.RawMessage(`"auto"`)
	}
	if isNull(o.Tools) {
		o.Tools = json.RawMessage(`[]`)
	}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	if status == "completed" || status == "incomplete" {
		u := rw.c.usage.get()
		o.Usage = &responseUsage{InputTokens: u.PromptTokens, InputTokensDetails: inputDetails{CachedTokens: u.PromptTokensDetails.CachedTokens},
			OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	}
	if status == "incomplete" {
		o.IncompleteDetails = &incompleteDetails{Reason: "max_output_tokens"}
	}
	return o
}

// status is the finished reply's: incomplete when max_output_tokens (or
// the context) cut it.
func (rw *responsesWriter) status() string {
	if r := rw.c.reasons[0]; r != nil && *r == finishReason(engine.Length) {
		return "incomplete"
	}
	return "completed"
}

// reply is the finished reply as text and calls: the calls parsed out of
// it, if any, and the text left beside them (hasText false: none).
func (rw *responsesWriter) reply() (text string, hasText bool, calls []toolCall) {
	text = rw.c.text[0].String()
	for _, cc := range rw.c.calls {
		text, hasText, calls = "", cc.content != nil, cc.calls
		if hasText {
			text = *cc.content
		}
		return text, hasText, calls
	}
	return text, true, nil
}

// message is the message item holding text.
func (rw *responsesWriter) message(text, status string) messageItem {
	if rw.msgID == "" {
		rw.msgID = newID("msg_")
	}
	return messageItem{Type: "message", ID: rw.msgID, Status: status, Role: "assistant", Content: []outputText{newOutputText(text)}}
}

// callItems are the output items of calls; an item's id is fc_ and the
// call's id's digits, so that the two stay paired.
func callItems(calls []toolCall) []functionCallItem {
	out := make([]functionCallItem, len(calls))
	for i, c := range calls {
		out[i] = functionCallItem{Type: "function_call", ID: "fc_" + strings.TrimPrefix(c.ID, "call_"), CallID: c.ID,
			Name: c.Function.Name, Arguments: c.Function.Arguments, Status: "completed"}
	}
	return out
}

// whole answers the response object once the reply has ended.
func (rw *responsesWriter) whole(ctx context.Context, w http.ResponseWriter, items <-chan item) {
	c := rw.c
	var failed error
	for it := range items {
		c.j.observe(it)
		c.add(it)
		if err := engineError(it.ev); err != nil && failed == nil {
			failed = err
		}
	}
	if cutByShutdown(ctx) {
		writeError(w, errShutdownCut)
		return
	}
	if ctx.Err() != nil {
		return
	}
	if failed != nil {
		writeError(w, failed)
		return
	}
	status := rw.status()
	text, hasText, calls := rw.reply()
	var output []any
	if hasText || len(calls) == 0 {
		output = append(output, rw.message(text, status))
	}
	for _, fc := range callItems(calls) {
		output = append(output, fc)
	}
	writeJSON(w, http.StatusOK, rw.object(status, output))
}
