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
//	per function call: output_item.added once its name is whole,
//	function_call_arguments.delta as its arguments are generated
//	(tools_stream.go), and when the reply ends
//	function_call_arguments.done, output_item.done
//	response.completed | response.incomplete     the whole response object
//
// Text a tool-using reply may turn into a call is held back as on chat
// (chatWriter.release); the message holds the text streamed, up to where
// the reply's first call started.

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

// stream sends the reply as the Responses API's events. Output items are
// numbered in the order they start: a function call's as its name is
// whole, the message's as its first text comes (or at the end, for text
// beside calls), and the final response lists them in that order.
func (rw *responsesWriter) stream(ctx context.Context, w http.ResponseWriter, items <-chan item) {
	c := rw.c
	c.streamCalls()
	sse := newSSE(w, c.s.cfg.WriteTimeout)
	started := rw.object("in_progress", nil)
	rw.emit(sse, streamEvent{Type: "response.created", Response: &started})
	rw.emit(sse, streamEvent{Type: "response.in_progress", Response: &started})
	var output []any    // the items started, in order; a call's as sent so far
	var streamed []byte // the message's text so far
	msg := -1           // the message's output index (-1: not started)
	var callAt []int    // per call, its output index
	openMessage := func() {
		if msg >= 0 {
			return
		}
		msg = len(output)
		m := rw.message("", "in_progress")
		m.Content = []outputText{}
		output = append(output, m)
		rw.emit(sse, streamEvent{Type: "response.output_item.added", OutputIndex: intp(msg), Item: m})
		rw.emit(sse, streamEvent{Type: "response.content_part.added", ItemID: rw.msgID, OutputIndex: intp(msg), ContentIndex: intp(0), Part: partp(newOutputText(""))})
	}
	sendText := func(t *string) {
		openMessage()
		streamed = append(streamed, *t...)
		rw.emit(sse, streamEvent{Type: "response.output_text.delta", ItemID: rw.msgID, OutputIndex: intp(msg), ContentIndex: intp(0),
			Delta: t, Logprobs: noLogprobs})
	}
	sendCalls := func(deltas []toolCall) {
		for _, d := range deltas {
			if d.ID != "" { // a new call: its item
				callAt = append(callAt, len(output))
				fc := callItems([]toolCall{d})[0]
				fc.Status, fc.Arguments = "in_progress", ""
				output = append(output, fc)
				rw.emit(sse, streamEvent{Type: "response.output_item.added", OutputIndex: intp(callAt[d.Index]), Item: fc})
			}
			if d.Function.Arguments == "" {
				continue
			}
			k := callAt[d.Index]
			fc := output[k].(functionCallItem)
			fc.Arguments += d.Function.Arguments
			output[k] = fc
			rw.emit(sse, streamEvent{Type: "response.function_call_arguments.delta", ItemID: fc.ID, OutputIndex: intp(k), Delta: strp(d.Function.Arguments)})
		}
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
		sendCalls(delta.Delta.ToolCalls)
		if delta.Delta.Content == nil || *delta.Delta.Content == "" {
			continue
		}
		if len(c.calls) > 0 && delta.FinishReason != nil {
			continue // content beside calls: sent with the message below
		}
		sendText(delta.Delta.Content)
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
	for _, k := range callAt {
		fc := output[k].(functionCallItem)
		fc.Status = "completed"
		output[k] = fc
		rw.emit(sse, streamEvent{Type: "response.function_call_arguments.done", ItemID: fc.ID, OutputIndex: intp(k), Arguments: strp(fc.Arguments), Name: fc.Name})
		rw.emit(sse, streamEvent{Type: "response.output_item.done", OutputIndex: intp(k), Item: fc})
	}
	text, hasText, _ := rw.reply()
	if msg >= 0 {
		text, hasText = string(streamed), true // what the client was sent
	}
	if hasText || len(callAt) == 0 {
		if msg < 0 && text != "" { // held back until the end: sent whole
			sendText(&text)
		}
		openMessage()
		m := rw.message(text, status)
		output[msg] = m
		rw.emit(sse, streamEvent{Type: "response.output_text.done", ItemID: rw.msgID, OutputIndex: intp(msg), ContentIndex: intp(0), Text: &text, Logprobs: noLogprobs})
		rw.emit(sse, streamEvent{Type: "response.content_part.done", ItemID: rw.msgID, OutputIndex: intp(msg), ContentIndex: intp(0), Part: &m.Content[0]})
		rw.emit(sse, streamEvent{Type: "response.output_item.done", OutputIndex: intp(msg), Item: m})
	}
	final := rw.object(status, output)
	rw.emit(sse, streamEvent{Type: "response." + status, Response: &final})
}
