package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// POST /v1/messages is Anthropic's Messages API, as llama.cpp and vLLM
// serve it for Anthropic clients and coding agents. A request is
// translated onto a chat completion (messagesRequest.chat) and runs the
// chat path: the same template, sampling, stop strings and tool machinery.
//
//	system               a string or text blocks: a system message first
//	messages[].content   a string or blocks: text; tool_use (assistant:
//	                     written into the turn in the tool-call format the
//	                     template teaches, toolFormat, as the model would
//	                     have produced it); tool_result (user: a "tool"
//	                     message, its text prefixed "Error: " when is_error)
//	tools                {name, description, input_schema}: OpenAI's
//	                     function tools with input_schema as parameters
//	tool_choice          auto, any (required), tool (named), none;
//	                     disable_parallel_tool_use is parallel_tool_calls false
//	stop_sequences       stop strings; the one that matched is stop_sequence
//	max_tokens           required; past the context's room it is clamped
//	                     (stop_reason model_context_window_exceeded)
//	metadata, thinking   ignored
//
// Errors use Anthropic's envelope (messages_errors.go); the response and
// its stream are messages_writer.go's.

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	Model         string              `json:"model"`
	MaxTokens     *int                `json:"max_tokens"` // required, as Anthropic requires it
	System        json.RawMessage     `json:"system"`     // null, a string or a list of text blocks
	Messages      []messagesTurn      `json:"messages"`
	Tools         []messagesTool      `json:"tools"`
	ToolChoice    *messagesToolChoice `json:"tool_choice"`
	StopSequences []string            `json:"stop_sequences"`
	Temperature   *float64            `json:"temperature"`
	TopP          *float64            `json:"top_p"`
	TopK          *int                `json:"top_k"`
	Stream        bool                `json:"stream"`
	Metadata      json.RawMessage     `json:"metadata"` // user_id: ignored
}

type messagesTurn struct {
	Role    string          `json:"role"`    // user or assistant
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

// messagesBlock is one content block of a request: text, tool_use or
// tool_result (the fields of each; the others stay zero).
type messagesBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`        // text
	ID        string          `json:"id"`          // tool_use
	Name      string          `json:"name"`        // tool_use
	Input     json.RawMessage `json:"input"`       // tool_use: a JSON object
	ToolUseID string          `json:"tool_use_id"` // tool_result
	Content   json.RawMessage `json:"content"`     // tool_result: a string or text blocks
	IsError   bool            `json:"is_error"`    // tool_result
}

type messagesTool struct {
	Type        string          `json:"type"` // absent or "custom": Anthropic's server tools (bash_..., web_search_...) are not run here
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type messagesToolChoice struct {
	Type                   string `json:"type"` // auto, any, tool, none
	Name                   string `json:"name"` // tool
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

// handleMessages serves POST /v1/messages.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	var q messagesRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &q); err != nil {
		writeMessagesError(w, err)
		return
	}
	if err := q.check(); err != nil {
		writeMessagesError(w, err)
		return
	}
	sl, err := s.acquire(r, q.Model)
	if err != nil {
		writeMessagesError(w, err)
		return
	}
	defer s.reg.release(sl)
	m := sl.m
	cq, err := q.chat(toolFormat(m.Template.Source()))
	if err != nil {
		writeMessagesError(w, err)
		return
	}
	prompt, tools, toolSpec, err := chatPrompt(m, cq)
	if err != nil {
		writeMessagesError(w, err)
		return
	}
	// max_tokens is required and sent as a budget (Claude Code asks
	// 32000) by clients that cannot know a local model's context: more
	// than the prompt leaves is clamped to what it leaves, and a reply
	// that runs into it ends model_context_window_exceeded, as Anthropic's
	// does, rather than the OpenAI routes' 400.
	clamped := false
	if room := m.MaxModelLen - len(prompt); room > 0 && *cq.MaxTokens > room {
		cq.MaxTokens, clamped = &room, true
	}
	j, err := s.newJob(sl, &cq.samplingRequest, [][]int32{prompt}, "messages")
	if err != nil {
		writeMessagesError(w, err)
		return
	}
	if toolSpec != nil {
		if j.constraint, err = s.constraint(sl, toolSpec); err != nil {
			writeMessagesError(w, err)
			return
		}
	}
	items, err := j.start(r.Context())
	if err != nil {
		writeMessagesError(w, err)
		return
	}
	defer j.cancel()
	// The chat writer's state machine (text held while it may be a tool
	// call, calls parsed at the end) does the work; mw reshapes it.
	c := &chatWriter{s: s, j: j, tok: m.Tokenizer, model: q.Model, text: make([]strings.Builder, 1), lps: make([][]chatTokenLogprob, 1),
		reasons: make([]*string, 1), tools: tools, holding: []bool{tools != nil}}
	mw := &messagesWriter{c: c, id: newID("msg_"), model: q.Model, inputTokens: len(prompt), clamped: clamped}
	if q.Stream {
		mw.stream(r.Context(), w, items)
	} else {
		mw.whole(r.Context(), w, items)
	}
}

// check refuses what is missing or malformed before the model is loaded.
func (q *messagesRequest) check() error {
	if q.Model == "" {
		return badRequest("model", "model: field required")
	}
	if q.MaxTokens == nil {
		return badRequest("max_tokens", "max_tokens: field required")
	}
	if len(q.Messages) == 0 {
		return badRequest("messages", "messages must hold at least one message")
	}
	for i, s := range q.StopSequences {
		if s == "" {
			return badRequest("stop_sequences", "stop_sequences[%d] is empty", i)
		}
	}
	return nil
}

// chat translates the request onto a chat completion request; format is
// the tool-call format of the model's template (toolFormat), in which
// tool_use blocks of the history are written.
func (q *messagesRequest) chat(format string) (*chatRequest, error) {
	cq := &chatRequest{samplingRequest: samplingRequest{Model: q.Model, MaxTokens: q.MaxTokens, Temperature: q.Temperature,
		TopP: q.TopP, TopK: q.TopK, Stream: q.Stream}}
	if len(q.StopSequences) > 0 {
		cq.Stop, _ = json.Marshal(q.StopSequences)
	}
	if !isNull(q.System) {
		text, err := blocksText(q.System)
		if err != nil {
			return nil, badRequest("system", "system: %v", err)
		}
		cq.Messages = append(cq.Messages, textMessage("system", text))
	}
	for i, turn := range q.Messages {
		msgs, err := turnMessages(turn, format)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("messages[%d]", i), "messages[%d]: %v", i, err)
		}
		cq.Messages = append(cq.Messages, msgs...)
	}
	if err := q.chatTools(cq); err != nil {
		return nil, err
	}
	return cq, nil
}

// chatTools maps tools and tool_choice onto OpenAI's function tools.
func (q *messagesRequest) chatTools(cq *chatRequest) error {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	if len(q.Tools) > 0 {
		tools := make([]tool, len(q.Tools))
		for i, t := range q.Tools {
			if t.Type != "" && t.Type != "custom" {
				return badRequest(fmt.Sprintf("tools[%d].type", i), "tools[%d]: type %q is one of Anthropic's server tools, which this server does not run; want a custom tool {name, description, input_schema}", i, t.Type)
			}
			if t.Name == "" {
				return badRequest(fmt.Sprintf("tools[%d].name", i), "tools[%d].name: field required", i)
			}
			if isNull(t.InputSchema) {
				return badRequest(fmt.Sprintf("tools[%d].input_schema", i), "tools[%d].input_schema: field required", i)
			}
			tools[i] = tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}}
		}
		cq.Tools, _ = json.Marshal(tools)
	}
	tc := q.ToolChoice
	if tc == nil {
		return nil
	}
	var choice any
	switch tc.Type {
	case "auto", "none":
		choice = tc.Type
	case "any":
		choice = "required"
	case "tool":
		if tc.Name == "" {
			return badRequest("tool_choice.name", "tool_choice of type tool needs a name")
		}
		choice = map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}}
	default:
		return badRequest("tool_choice.type", "tool_choice.type %q: want auto, any, tool or none", tc.Type)
	}
	cq.ToolChoice, _ = json.Marshal(choice)
	if tc.DisableParallelToolUse {
		no := false
		cq.ParallelToolCalls = &no
	}
	return nil
}

// turnMessages translates one turn into chat messages: a user turn's
// tool_result blocks become "tool" messages, in order among its text; an
// assistant turn is one message, its tool_use blocks written after its
// text in the template's format.
func turnMessages(turn messagesTurn, format string) ([]chatMessage, error) {
	if turn.Role != "user" && turn.Role != "assistant" {
		return nil, fmt.Errorf("role %q: want user or assistant", turn.Role)
	}
	var s string
	if json.Unmarshal(turn.Content, &s) == nil {
		return []chatMessage{textMessage(turn.Role, s)}, nil
	}
	var blocks []messagesBlock
	if err := json.Unmarshal(turn.Content, &blocks); err != nil {
		return nil, fmt.Errorf("content: want a string or a list of content blocks")
	}
	var out []chatMessage
	var texts []string
	var calls []messagesBlock
	flush := func() {
		if len(texts) > 0 {
			out = append(out, textMessage(turn.Role, strings.Join(texts, "\n")))
			texts = nil
		}
	}
	for k, b := range blocks {
		switch {
		case b.Type == "text":
			texts = append(texts, b.Text)
		case b.Type == "tool_use" && turn.Role == "assistant":
			if b.Name == "" {
				return nil, fmt.Errorf("content[%d]: tool_use needs a name", k)
			}
			input, err := objectJSON(b.Input)
			if err != nil {
				return nil, fmt.Errorf("content[%d].input: %v", k, err)
			}
			b.Input = input
			calls = append(calls, b)
		case b.Type == "tool_result" && turn.Role == "user":
			text := ""
			if !isNull(b.Content) {
				var err error
				if text, err = blocksText(b.Content); err != nil {
					return nil, fmt.Errorf("content[%d].content: %v", k, err)
				}
			}
			if b.IsError {
				text = "Error: " + text
			}
			flush()
			out = append(out, textMessage("tool", text))
		case b.Type == "tool_use" || b.Type == "tool_result":
			return nil, fmt.Errorf("content[%d]: a %s block belongs in a%s turn", k, b.Type, map[bool]string{true: "n assistant", false: " user"}[b.Type == "tool_use"])
		default:
			return nil, fmt.Errorf("content[%d] has type %q; only text, tool_use and tool_result blocks are supported", k, b.Type)
		}
	}
	if len(calls) > 0 {
		texts = append(texts, blocksCallsText(calls, format))
	}
	flush()
	if len(out) == 0 { // an empty list of blocks: an empty turn
		out = append(out, textMessage(turn.Role, ""))
	}
	return out, nil
}

// blocksCallsText writes an assistant's tool_use blocks as the template teaches the
// model to make them (toolFormat), so the history reads as its own.
func blocksCallsText(calls []messagesBlock, format string) string {
	var b strings.Builder
	switch format {
	case "mistral":
		b.WriteString("[TOOL_CALLS] [")
		for i, c := range calls {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"name": %s, "arguments": %s}`, quoteJSON(c.Name), c.Input)
		}
		b.WriteString("]")
	case "llama3":
		for i, c := range calls {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, `{"name": %s, "parameters": %s}`, quoteJSON(c.Name), c.Input)
		}
	default: // hermes
		for i, c := range calls {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %s, \"arguments\": %s}\n</tool_call>", quoteJSON(c.Name), c.Input)
		}
	}
	return b.String()
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// objectJSON checks a tool_use input, a JSON object (null or absent: {}),
// and compacts it.
func objectJSON(raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return json.RawMessage("{}"), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return nil, fmt.Errorf("want a JSON object")
	}
	return buf.Bytes(), nil
}

// blocksText reads system's or a tool_result's content: a string or a
// list of text blocks, joined with "\n" as messageText joins parts.
func blocksText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []messagesBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", fmt.Errorf("want a string or a list of text blocks")
	}
	texts := make([]string, len(blocks))
	for k, b := range blocks {
		if b.Type != "text" {
			return "", fmt.Errorf("block %d has type %q; only text blocks are supported", k, b.Type)
		}
		texts[k] = b.Text
	}
	return strings.Join(texts, "\n"), nil
}

func textMessage(role, text string) chatMessage {
	content, _ := json.Marshal(text)
	return chatMessage{Role: role, Content: content}
}
