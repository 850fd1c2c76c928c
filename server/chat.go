package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"kiln/chat"
	"kiln/engine"
	"kiln/tokenizer"
)

// handleChat serves POST /v1/chat/completions.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var q chatRequest
	sl := s.openRequest(w, r, &q)
	if sl == nil {
		return
	}
	defer s.reg.release(sl)
	m := sl.m
	prompt, tools, toolSpec, err := chatPrompt(m, &q)
	if err != nil {
		writeError(w, err)
		return
	}
	j, err := s.newJob(sl, &q.samplingRequest, [][]int32{prompt}, "messages")
	if err != nil {
		writeError(w, err)
		return
	}
	if toolSpec != nil {
		if j.constraint != nil {
			writeError(w, badRequest("tool_choice", "tool_choice %s constrains the reply: it does not combine with structured output", tools.kind))
			return
		}
		if j.constraint, err = s.constraint(sl, toolSpec); err != nil {
			writeError(w, err)
			return
		}
	}
	if q.TopLogprobs != nil {
		k := *q.TopLogprobs
		if err := s.checkLogprobs("top_logprobs", k); err != nil {
			writeError(w, err)
			return
		}
		if k > 0 && !q.Logprobs {
			writeError(w, badRequest("top_logprobs", "top_logprobs needs logprobs: true"))
			return
		}
		j.params.TopLogprobs = k
	}
	j.params.Logprobs = q.Logprobs
	items, err := j.start(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	defer j.cancel()
	c := &chatWriter{s: s, j: j, tok: m.Tokenizer, id: newID("chatcmpl-"), created: s.cfg.Now().Unix(), model: q.Model,
		logprobs: q.Logprobs, text: make([]strings.Builder, j.n), lps: make([][]chatTokenLogprob, j.n), reasons: make([]*string, j.n),
		tools: tools, holding: make([]bool, j.n)}
	for i := range c.holding {
		c.holding[i] = tools != nil
	}
	if q.Stream {
		c.stream(r.Context(), w, items, q.StreamOptions != nil && q.StreamOptions.IncludeUsage)
	} else {
		c.whole(r.Context(), w, items)
	}
}

// chatPrompt renders a chat request's prompt, with its tools shown to the
// model by the template; tools and toolSpec (the constraint of required
// and named tool choices) are nil without tools.
func chatPrompt(m *Model, q *chatRequest) (prompt []int32, tools *toolMode, toolSpec *constraintSpec, err error) {
	maxCalls := maxToolCalls
	if q.ParallelToolCalls != nil && !*q.ParallelToolCalls {
		maxCalls = 1
	}
	tools, toolSpec, err = parseTools(q.Tools, q.ToolChoice, maxCalls)
	if err != nil {
		return nil, nil, nil, err
	}
	kwargs := q.ChatTemplateKwargs
	if tools != nil { // the template shows the model its tools
		tools.format = toolFormat(m.Template.Source())
		kwargs = maps.Clone(kwargs)
		if kwargs == nil {
			kwargs = map[string]any{}
		}
		kwargs["tools"] = tools.tools
	}
	prompt, err = renderChat(m, q.Messages, q.AddGenerationPrompt, kwargs, q.ContinueFinalMessage)
	return prompt, tools, toolSpec, err
}

// unsupported refuses what kiln does not do yet rather than ignore it.
func (q *chatRequest) unsupported() error {
	if len(q.Messages) == 0 {
		return badRequest("messages", "messages must hold at least one message")
	}
	return q.refused()
}

// renderChat renders a conversation with the model's chat template and
// tokenizes it as llama.cpp and vLLM do for chat: special-token texts are
// parsed, BOS is added when the vocabulary asks, and a BOS the template
// printed itself is taken off the text so that the prompt does not start
// with two.
//
// cont is continue_final_message (continue.go): no generation prompt, and
// the final assistant message left open for the model to continue.
func renderChat(m *Model, in []chatMessage, addGen *bool, kwargs map[string]any, cont bool) ([]int32, error) {
	if cont {
		if err := checkContinue(in, addGen); err != nil {
			return nil, err
		}
		no := false
		addGen = &no
	}
	msgs := make([]chat.Message, len(in))
	for i, msg := range in {
		switch msg.Role {
		case "system", "user", "assistant", "tool":
		case "developer": // OpenAI's newer name for the system role
			msg.Role = "system"
		default:
			return nil, badRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q: want system, developer, user, assistant or tool", i, msg.Role)
		}
		if err := checkToolCalls(msg.ToolCalls); err != nil {
			return nil, badRequest(fmt.Sprintf("messages[%d].tool_calls", i), "messages[%d].tool_calls: %v", i, err)
		}
		text, err := messageText(msg.Content)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("messages[%d].content", i), "messages[%d].content: %v", i, err)
		}
		msgs[i] = chat.Message{Role: msg.Role, Content: text}
	}
	tok := m.Tokenizer
	v := tok.Vocab()
	opts := chat.Options{AddGenerationPrompt: addGen == nil || *addGen, BOS: tokenText(tok, v.BOS), EOS: tokenText(tok, v.EOS), Vars: kwargs}
	text, err := m.Template.Render(msgs, opts)
	if err != nil {
		return nil, badRequest("messages", "the chat template refused the conversation: %v", err)
	}
	if cont {
		if text, err = cutAfterFinal(text, msgs[len(msgs)-1].Content); err != nil {
			return nil, err
		}
	}
	if v.AddBOS && opts.BOS != "" {
		text = strings.TrimPrefix(text, opts.BOS)
	}
	ids := tok.EncodePrompt(text)
	if len(ids) == 0 {
		return nil, badRequest("messages", "the conversation renders to an empty prompt")
	}
	return ids, nil
}

// messageText reads a message's content: a string, null, or a list of
// parts of which only text parts are supported.
func messageText(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("want a string or a list of content parts")
	}
	// Parts are joined with "\n", as vLLM joins a message's text parts
	// (not run together: "What is" and "the best book" stay two words).
	texts := make([]string, len(parts))
	for k, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("part %d has type %q; only text parts are supported", k, p.Type)
		}
		texts[k] = p.Text
	}
	return strings.Join(texts, "\n"), nil
}

// checkToolCalls checks a message's tool_calls: null, or a list of
// OpenAI's {"id", "type": "function", "function": {"name", "arguments"}}.
func checkToolCalls(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var calls []struct {
		Type     string `json:"type"`
		Function *struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &calls); err != nil {
		return fmt.Errorf("want a list of {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}} (arguments a JSON string)")
	}
	for k, c := range calls {
		if (c.Type != "" && c.Type != "function") || c.Function == nil || c.Function.Name == "" {
			return fmt.Errorf("call %d: want type function and a function name", k)
		}
	}
	return nil
}

// tokenText is the text of token id, or "" when the vocabulary has none.
func tokenText(tok *tokenizer.Tokenizer, id int32) string {
	if id < 0 || int(id) >= tok.Size() {
		return ""
	}
	return tok.Vocab().Tokens[id]
}

// chatWriter builds a chat.completion response, whole or streamed.
type chatWriter struct {
	s        *Server
	j        *job
	tok      *tokenizer.Tokenizer
	id       string
	created  int64
	model    string
	logprobs bool
	text     []strings.Builder
	lps      [][]chatTokenLogprob
	reasons  []*string
	usage    usageSum
	tools    *toolMode // nil: no tool calls
	calls    []calledChoice
	holding  []bool       // per choice: the text after shown is held back while it may be a tool call
	shown    []int        // per choice, with tools: bytes of its text released as content (release)
	cs       []callStream // per choice, streams only: the calls sent as deltas (nil: a whole response)
}

// tokenLogprob is one token's entry in the chat logprobs shape.
func (c *chatWriter) tokenLogprob(ev engine.Event) chatTokenLogprob {
	piece := c.tok.Piece(ev.Token)
	e := chatTokenLogprob{Token: piece, Logprob: ev.Logprob, Bytes: byteList(piece), TopLogprobs: make([]chatTopLogprob, len(ev.Top))}
	for k, t := range ev.Top {
		p := c.tok.Piece(t.ID)
		e.TopLogprobs[k] = chatTopLogprob{Token: p, Logprob: t.Logprob, Bytes: byteList(p)}
	}
	return e
}

func byteList(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// add folds one event into its choice and returns the stream delta. With
// c.cs set (a stream), a tool-using reply's calls go as deltas while they
// are generated (tools_stream.go).
func (c *chatWriter) add(it item) chatChoice {
	i := c.j.choice(it)
	ev := it.ev
	delta := chatChoice{Index: i, Delta: &chatOut{}}
	if c.tools != nil && c.shown == nil {
		c.shown = make([]int, len(c.text))
	}
	if ev.Text != "" {
		c.text[i].WriteString(ev.Text)
		text := ev.Text
		if c.tools != nil {
			text = c.release(i)
		}
		if text != "" {
			delta.Delta.Content = &text
		}
		if c.cs != nil && c.holding[i] && !ev.Done {
			delta.Delta.ToolCalls = c.cs[i].deltas(partialCalls(c.tools, c.text[i].String()[c.shown[i]:]))
		}
	}
	if c.logprobs && ev.Token >= 0 {
		e := c.tokenLogprob(ev)
		c.lps[i] = append(c.lps[i], e)
		delta.Logprobs = &chatLogprobs{Content: []chatTokenLogprob{e}}
	}
	if ev.Done {
		reason := finishReason(ev.Reason)
		if c.tools != nil {
			reason = c.finishCalls(i, ev.Reason, &delta, reason)
			if all := c.text[i].String(); c.shown[i] < len(all) { // held text that was no call after all
				text := all[c.shown[i]:]
				if delta.Delta.Content != nil {
					text = *delta.Delta.Content + text
				}
				delta.Delta.Content = &text
				c.shown[i] = len(all)
			}
		}
		delta.FinishReason = &reason
		c.reasons[i] = &reason
		c.usage.add(ev)
	}
	return delta
}

// release returns the text of choice i that can go out as content now. A
// constrained reply's never can. An auto reply's is held back while it may
// be a tool call (mayBeCall); once it cannot, it goes out up to where a
// call starts later in it (its format's marker, callMarker; text that may
// be the marker's start waits for the next token), and from there the
// reply is held as calls again.
func (c *chatWriter) release(i int) string {
	m := c.tools
	if m.kind != "auto" {
		return ""
	}
	all := c.text[i].String()
	from := c.shown[i]
	if c.holding[i] {
		if mayBeCall(all[from:], m.format) {
			return ""
		}
		c.holding[i] = false // plain text after all: release what was held
	}
	to := len(all)
	if marker := callMarker(m.format); marker != "" {
		if p := strings.Index(all[from:], marker); p >= 0 {
			to = from + p
			c.holding[i] = true
		} else {
			to -= markerStart(all[from:], marker)
		}
	}
	c.shown[i] = to
	return all[from:to]
}

// finishCalls reads choice i's calls once its reply has ended, records
// them (c.calls) and puts what the stream still owes into delta; it
// returns the finish reason.
//
// A reply that parses as calls finishes with "tool_calls". A constrained
// reply cut off by max_tokens keeps the calls that were complete, and
// never its raw JSON as content; a stream keeps the calls it sent, the cut
// one included. An auto stream that announced calls keeps them even when
// the whole reply does not parse (tools_stream.go). Text the model wrote
// after a call is the whole response's content; a stream that sent text
// before the call does not send it.
func (c *chatWriter) finishCalls(i int, why engine.FinishReason, delta *chatChoice, reason string) string {
	text := c.text[i].String()
	var final []toolCall
	var content *string
	parsed := false
	if why == engine.Stop {
		final, content, parsed = c.tools.calls(text)
	}
	cut := c.tools.kind != "auto" && why == engine.Length
	if c.cs == nil { // a whole response
		switch {
		case parsed:
			c.calls = append(c.calls, calledChoice{i, final, content})
			c.shown[i] = len(text)
			return "tool_calls"
		case cut:
			c.calls = append(c.calls, calledChoice{i, c.tools.completeCalls(text), nil})
			c.shown[i] = len(text)
		}
		return reason
	}
	if !parsed && !cut && len(c.cs[i].sent) == 0 {
		return reason // plain text
	}
	if !parsed {
		final, content = nil, nil
	}
	deltas, sent := c.cs[i].finish(c.tools, final, text[c.shown[i]:])
	c.calls = append(c.calls, calledChoice{i, sent, content})
	delta.Delta.ToolCalls = deltas
	if c.shown[i] == 0 && content != nil { // no text went before the calls: the text after them
		delta.Delta.Content = content
	}
	c.holding[i] = false
	c.shown[i] = len(text)
	if parsed {
		return "tool_calls"
	}
	return reason
}

// calledChoice is a choice whose reply parsed as tool calls.
type calledChoice struct {
	index   int
	calls   []toolCall
	content *string
}

func (c *chatWriter) whole(ctx context.Context, w http.ResponseWriter, items <-chan item) {
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
	resp := chatResponse{ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model, Usage: c.usage.get(),
		Choices: make([]chatChoice, len(c.text))}
	for i := range resp.Choices {
		text := c.text[i].String()
		resp.Choices[i] = chatChoice{Index: i, Message: &chatMessageOut{Role: "assistant", Content: &text}, FinishReason: c.reasons[i]}
		for _, cc := range c.calls {
			if cc.index == i {
				resp.Choices[i].Message = &chatMessageOut{Role: "assistant", Content: cc.content, ToolCalls: cc.calls}
			}
		}
		if c.logprobs {
			resp.Choices[i].Logprobs = &chatLogprobs{Content: c.lps[i]}
			if resp.Choices[i].Logprobs.Content == nil {
				resp.Choices[i].Logprobs.Content = []chatTokenLogprob{}
			}
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// streamCalls makes add send a tool-using reply's calls as deltas while
// they are generated (tools_stream.go).
func (c *chatWriter) streamCalls() {
	if c.tools != nil {
		c.cs = make([]callStream, len(c.text))
	}
}

func (c *chatWriter) stream(ctx context.Context, w http.ResponseWriter, items <-chan item, includeUsage bool) {
	sse := newSSE(w, c.s.cfg.WriteTimeout)
	chunk := chatResponse{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model}
	one := make([]chatChoice, 1)
	empty := ""
	for i := range c.text { // the role first, as OpenAI streams it
		one[0] = chatChoice{Index: i, Delta: &chatOut{Role: "assistant", Content: &empty}}
		chunk.Choices = one
		sse.send(chunk)
	}
	var failed error
	c.streamCalls()
	for it := range items {
		c.j.observe(it)
		delta := c.add(it)
		if err := engineError(it.ev); err != nil && failed == nil {
			failed = err
		}
		if sse.err != nil || (delta.Delta.Content == nil && delta.Logprobs == nil && delta.FinishReason == nil && len(delta.Delta.ToolCalls) == 0) {
			continue
		}
		one[0] = delta
		chunk.Choices = one
		if sse.send(chunk) != nil {
			c.j.cancel()
		}
	}
	if sse.err != nil || (ctx.Err() != nil && !cutByShutdown(ctx)) {
		return // the client left: nobody to tell
	}
	if cutByShutdown(ctx) {
		failed = errShutdownCut
	}
	if failed != nil {
		sse.send(asAPIError(failed).envelope())
	} else if includeUsage {
		sse.send(chatResponse{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
			Choices: []chatChoice{}, Usage: c.usage.get()})
	}
	sse.done()
}
