package server

import (
	"context"
	"encoding/json"
	"net/http"
)

// The Responses API's stream: Server-Sent Events with an "event:" line
// naming each one, a JSON body whose "type" repeats it, and a
// sequence_number counting from 0. No "data: [DONE]" ends it (OpenAI sends
// none): the last event is response.completed or response.incomplete, or
// "error" when the reply failed.
//
//	response.created, response.in_progress       the response, in_progress, no output
//	response.output_item.added                   the message item, once text comes
//	response.content_part.added                  its output_text part, empty
//	response.output_text.delta ...               the text as it is generated
//	response.output_text.done, content_part.done, output_item.done
//	per function call: output_item.added, function_call_arguments.delta
//	(the arguments whole: a call is parsed when the reply ends),
//	function_call_arguments.done, output_item.done
//	response.completed | response.incomplete     the whole response object
//
// Text a tool-using reply may turn into a call is held back as on chat
// (chatWriter.add); the message holds the text streamed, which in auto mode
// may include a call's raw text when the model wrote text first.

// streamEvent is every event's body: type, sequence_number, and the fields
// of its kind (the rest left out).
type streamEvent struct {
	Type           string          `json:"type"`
	SequenceNumber int             `json:"sequence_number"`
	Response       *responseObject `json:"response,omitempty"`
	OutputIndex    *int            `json:"output_index,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	Item           any             `json:"item,omitempty"`
	ContentIndex   *int            `json:"content_index,omitempty"`
	Part           *outputText     `json:"part,omitempty"`
	Delta          *string         `json:"delta,omitempty"`
	Text           *string         `json:"text,omitempty"`
	Arguments      *string         `json:"arguments,omitempty"`
	Name           string          `json:"name,omitempty"`     // function_call_arguments.done
	Logprobs       json.RawMessage `json:"logprobs,omitempty"` // [] on text events: no logprobs here
}

// errorEvent is the "error" event's body: the error envelope's fields
// flat, code and param null when none.
type errorEvent struct {
	Type           string  `json:"type"` // error
	SequenceNumber int     `json:"sequence_number"`
	Code           *string `json:"code"`
	Message        string  `json:"message"`
	Param          *string `json:"param"`
}

// emit sends one event, numbering it.
func (rw *responsesWriter) emit(sse *sseWriter, e streamEvent) error {
	e.SequenceNumber = rw.seq
	rw.seq++
	return sse.event(e.Type, e)
}

// noLogprobs is the text events' empty logprobs list.
var noLogprobs = json.RawMessage(`[]`)

func intp(i int) *int                { return &i }
func strp(s string) *string          { return &s }
func partp(p outputText) *outputText { return &p }

// stream sends the reply as the Responses API's events.
func (rw *responsesWriter) stream(ctx context.Context, w http.ResponseWriter, items <-chan item) {
	c := rw.c
	sse := newSSE(w, c.s.cfg.WriteTimeout)
	zero := intp(0)
	started := rw.object("in_progress", nil)
	rw.emit(sse, streamEvent{Type: "response.created", Response: &started})
	rw.emit(sse, streamEvent{Type: "response.in_progress", Response: &started})
	var streamed []byte // the message's text so far
	open := false       // the message item and its part are announced
	openMessage := func() {
		if open {
			return
		}
		open = true
		m := rw.message("", "in_progress")
		m.Content = []outputText{}
		rw.emit(sse, streamEvent{Type: "response.output_item.added", OutputIndex: zero, Item: m})
		rw.emit(sse, streamEvent{Type: "response.content_part.added", ItemID: rw.msgID, OutputIndex: zero, ContentIndex: zero, Part: partp(newOutputText(""))})
	}
	var failed error
	for it := range items {
		c.j.observe(it)
		delta := c.add(it)
		if err := engineError(it.ev); err != nil && failed == nil {
			failed = err
		}
		if sse.err != nil {
			c.j.cancel() // the client stopped reading: stop generating for it
			continue
		}
		if delta.Delta.Content == nil || *delta.Delta.Content == "" {
			continue
		}
		if len(c.calls) > 0 && delta.FinishReason != nil {
			continue // content beside calls: sent with the message below
		}
		openMessage()
		streamed = append(streamed, *delta.Delta.Content...)
		rw.emit(sse, streamEvent{Type: "response.output_text.delta", ItemID: rw.msgID, OutputIndex: zero, ContentIndex: zero,
			Delta: delta.Delta.Content, Logprobs: noLogprobs})
	}
	if sse.err != nil || (ctx.Err() != nil && !cutByShutdown(ctx)) {
		return // the client left: nobody to tell
	}
	if cutByShutdown(ctx) {
		failed = errShutdownCut
	}
	if failed != nil {
		ae := asAPIError(failed).envelope().Error
		sse.event("error", errorEvent{Type: "error", SequenceNumber: rw.seq, Code: ae.Code, Message: ae.Message, Param: ae.Param})
		return
	}
	status := rw.status()
	text, hasText, calls := rw.reply()
	if open {
		text, hasText = string(streamed), true // what the client was sent
	}
	var output []any
	if hasText || len(calls) == 0 {
		if !open && text != "" { // held back until the end: sent whole
			openMessage()
			rw.emit(sse, streamEvent{Type: "response.output_text.delta", ItemID: rw.msgID, OutputIndex: zero, ContentIndex: zero, Delta: &text, Logprobs: noLogprobs})
		}
		openMessage()
		m := rw.message(text, status)
		rw.emit(sse, streamEvent{Type: "response.output_text.done", ItemID: rw.msgID, OutputIndex: zero, ContentIndex: zero, Text: &text, Logprobs: noLogprobs})
		rw.emit(sse, streamEvent{Type: "response.content_part.done", ItemID: rw.msgID, OutputIndex: zero, ContentIndex: zero, Part: &m.Content[0]})
		rw.emit(sse, streamEvent{Type: "response.output_item.done", OutputIndex: zero, Item: m})
		output = append(output, m)
	}
	for _, fc := range callItems(calls) {
		k := intp(len(output))
		added := fc
		added.Status, added.Arguments = "in_progress", ""
		rw.emit(sse, streamEvent{Type: "response.output_item.added", OutputIndex: k, Item: added})
		rw.emit(sse, streamEvent{Type: "response.function_call_arguments.delta", ItemID: fc.ID, OutputIndex: k, Delta: strp(fc.Arguments)})
		rw.emit(sse, streamEvent{Type: "response.function_call_arguments.done", ItemID: fc.ID, OutputIndex: k, Arguments: strp(fc.Arguments), Name: fc.Name})
		rw.emit(sse, streamEvent{Type: "response.output_item.done", OutputIndex: k, Item: fc})
		output = append(output, fc)
	}
	final := rw.object(status, output)
	rw.emit(sse, streamEvent{Type: "response." + status, Response: &final})
}
