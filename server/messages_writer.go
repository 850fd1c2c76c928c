package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"kiln/engine"
)

// messagesWriter answers /v1/messages, whole or as Anthropic's stream of
// named events:
//
//	message_start         the message, content [], usage.input_tokens
//	ping
//	content_block_start   {index, content_block: text "" | tool_use with input {}}
//	content_block_delta   {index, delta: text_delta {text} | input_json_delta {partial_json}}
//	content_block_stop    {index}
//	message_delta         {delta: {stop_reason, stop_sequence}, usage: {output_tokens}}
//	message_stop
//
// Text streams as it is generated (held back while it may still be an
// auto tool call, as chat streams it); a tool_use block starts once its
// call's name is whole and its input streams as input_json_delta events as
// it is generated (tools_stream.go): their concatenation is the input. An
// engine failure mid-stream is an "error" event in Anthropic's envelope.
type messagesWriter struct {
	c           *chatWriter // one choice; its state machine holds text and parses calls
	id          string      // msg_...
	model       string
	inputTokens int  // the prompt's tokens, known before the engine reports them
	clamped     bool // max_tokens was cut to the context's room: reaching it is the context's end
	stopString  string
	reason      engine.FinishReason
}

type messagesResponse struct {
	ID           string        `json:"id"`
	Type         string        `json:"type"` // message
	Role         string        `json:"role"` // assistant
	Model        string        `json:"model"`
	Content      []messagesOut `json:"content"`
	StopReason   *string       `json:"stop_reason"`   // null in message_start
	StopSequence *string       `json:"stop_sequence"` // the stop_sequences entry that matched, else null
	Usage        messagesUsage `json:"usage"`
}

// messagesOut is a response content block: text or tool_use.
type messagesOut struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"` // text: present even when ""
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"` // tool_use: a JSON object
}

type messagesUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Stream events.

type messagesStart struct {
	Type    string           `json:"type"`
	Message messagesResponse `json:"message"`
}

type messagesBlockStart struct {
	Type         string      `json:"type"`
	Index        int         `json:"index"`
	ContentBlock messagesOut `json:"content_block"`
}

type messagesBlockDelta struct {
	Type  string             `json:"type"`
	Index int                `json:"index"`
	Delta messagesDeltaValue `json:"delta"`
}

type messagesDeltaValue struct {
	Type        string  `json:"type"`                   // text_delta or input_json_delta
	Text        *string `json:"text,omitempty"`         // text_delta
	PartialJSON *string `json:"partial_json,omitempty"` // input_json_delta
}

type messagesBlockStop struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type messagesEnd struct {
	Type  string `json:"type"` // message_delta
	Delta struct {
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage messagesUsage `json:"usage"`
}

type messagesType struct {
	Type string `json:"type"` // ping, message_stop
}

// event writes one named Server-Sent Event: "event: NAME\ndata: JSON\n\n".
func (s *sseWriter) event(name string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.buf = append(append(append(append(append(s.buf[:0], "event: "...), name...), "\ndata: "...), body...), "\n\n"...)
	return s.write(s.buf)
}

// add folds one event into the chat writer, keeping what Anthropic's
// stop_reason needs from the final one.
func (mw *messagesWriter) add(it item) chatChoice {
	if it.ev.Done {
		mw.reason, mw.stopString = it.ev.Reason, it.ev.StopString
	}
	return mw.c.add(it)
}

// calls are the reply's tool calls, once it has ended (nil: none).
func (mw *messagesWriter) calls() *calledChoice {
	for k := range mw.c.calls {
		if len(mw.c.calls[k].calls) > 0 {
			return &mw.c.calls[k]
		}
	}
	return nil
}

// stop is the message's stop_reason and stop_sequence.
func (mw *messagesWriter) stop() (reason string, sequence *string) {
	switch {
	case mw.reason == engine.Length && mw.clamped:
		return "model_context_window_exceeded", nil
	case mw.reason == engine.Length:
		return "max_tokens", nil
	case mw.calls() != nil:
		return "tool_use", nil
	case mw.stopString != "":
		s := mw.stopString
		return "stop_sequence", &s
	}
	return "end_turn", nil
}

func (mw *messagesWriter) usage() messagesUsage {
	u := mw.c.usage.get()
	return messagesUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
}

// toolUse is a parsed call as a tool_use block.
func toolUse(tc toolCall) messagesOut {
	input := json.RawMessage(tc.Function.Arguments)
	if obj, err := objectJSON(input); err == nil {
		input = obj
	} else {
		input = json.RawMessage("{}") // a call whose arguments are no object: none to give
	}
	return messagesOut{Type: "tool_use", ID: toolUseID(tc.ID), Name: tc.Function.Name, Input: input}
}

// toolUseID is a tool_use block's id: toolu_ and its call's id's digits,
// so that a stream's block and the call it streams stay paired.
func toolUseID(callID string) string { return "toolu_" + strings.TrimPrefix(callID, "call_") }

func (mw *messagesWriter) whole(ctx context.Context, w http.ResponseWriter, items <-chan item) {
	var failed error
	for it := range items {
		mw.c.j.observe(it)
		mw.add(it)
		if err := engineError(it.ev); err != nil && failed == nil {
			failed = err
		}
	}
	if cutByShutdown(ctx) {
		writeMessagesError(w, errShutdownCut)
		return
	}
	if ctx.Err() != nil {
		return
	}
	if failed != nil {
		writeMessagesError(w, failed)
		return
	}
	reason, seq := mw.stop()
	resp := messagesResponse{ID: mw.id, Type: "message", Role: "assistant", Model: mw.model, Content: []messagesOut{},
		StopReason: &reason, StopSequence: seq, Usage: mw.usage()}
	text := mw.c.text[0].String()
	var calls []toolCall
	if cc := mw.calls(); cc != nil {
		text, calls = "", cc.calls
		if cc.content != nil {
			text = *cc.content
		}
	} else if len(mw.c.calls) > 0 { // a constrained reply cut off before its first call was whole
		text = ""
	}
	if text != "" {
		resp.Content = append(resp.Content, messagesOut{Type: "text", Text: &text})
	}
	for _, tc := range calls {
		resp.Content = append(resp.Content, toolUse(tc))
	}
	writeJSON(w, http.StatusOK, resp)
}

func (mw *messagesWriter) stream(ctx context.Context, w http.ResponseWriter, items <-chan item) {
	mw.c.streamCalls()
	sse := newSSE(w, mw.c.s.cfg.WriteTimeout)
	sse.event("message_start", messagesStart{Type: "message_start", Message: messagesResponse{ID: mw.id, Type: "message", Role: "assistant",
		Model: mw.model, Content: []messagesOut{}, Usage: messagesUsage{InputTokens: mw.inputTokens}}})
	sse.event("ping", messagesType{Type: "ping"})
	send := func(name string, v any) {
		if sse.err == nil && sse.event(name, v) != nil {
			mw.c.j.cancel()
		}
	}
	blocks := 0         // content blocks started; blocks-1 may be open
	open := ""          // the open block's type: text, tool_use or ""
	var callBlock []int // per call, its block
	var raw []int8      // per call: 1 its arguments are an object, streamed as they come; -1 not; 0 none yet
	closeBlock := func() {
		if open != "" {
			send("content_block_stop", messagesBlockStop{Type: "content_block_stop", Index: blocks - 1})
			open = ""
		}
	}
	sendText := func(t *string) {
		if open != "text" {
			closeBlock()
			empty := ""
			send("content_block_start", messagesBlockStart{Type: "content_block_start", Index: blocks, ContentBlock: messagesOut{Type: "text", Text: &empty}})
			blocks++
			open = "text"
		}
		send("content_block_delta", messagesBlockDelta{Type: "content_block_delta", Index: blocks - 1, Delta: messagesDeltaValue{Type: "text_delta", Text: t}})
	}
	sendCalls := func(deltas []toolCall) {
		for _, d := range deltas {
			if d.ID != "" {
				closeBlock()
				callBlock = append(callBlock, blocks)
				raw = append(raw, 0)
				b := messagesOut{Type: "tool_use", ID: toolUseID(d.ID), Name: d.Function.Name, Input: json.RawMessage("{}")}
				send("content_block_start", messagesBlockStart{Type: "content_block_start", Index: blocks, ContentBlock: b})
				blocks++
				open = "tool_use"
			}
			args := d.Function.Arguments
			if args == "" {
				continue
			}
			k := d.Index
			if raw[k] == 0 { // the first bytes: an object streams, anything else leaves the input {}
				raw[k] = -1
				if args[0] == '{' {
					raw[k] = 1
				}
			}
			if raw[k] < 0 || callBlock[k] != blocks-1 || open != "tool_use" {
				continue // a call's bytes only come while it is the last one
			}
			send("content_block_delta", messagesBlockDelta{Type: "content_block_delta", Index: callBlock[k], Delta: messagesDeltaValue{Type: "input_json_delta", PartialJSON: &args}})
		}
	}
	var failed error
	for it := range items {
		mw.c.j.observe(it)
		delta := mw.add(it)
		if err := engineError(it.ev); err != nil && failed == nil {
			failed = err
		}
		sendCalls(delta.Delta.ToolCalls)
		if t := delta.Delta.Content; t != nil && *t != "" {
			sendText(t)
		}
	}
	if sse.err != nil || (ctx.Err() != nil && !cutByShutdown(ctx)) {
		return // the client left: nobody to tell
	}
	if cutByShutdown(ctx) {
		failed = errShutdownCut
	}
	if failed != nil {
		_, env := messagesError(failed)
		send("error", env)
		return
	}
	closeBlock()
	end := messagesEnd{Type: "message_delta", Usage: mw.usage()}
	reason, seq := mw.stop()
	end.Delta.StopReason, end.Delta.StopSequence = &reason, seq
	send("message_delta", end)
	send("message_stop", messagesType{Type: "message_stop"})
}
