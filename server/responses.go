package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// POST /v1/responses: OpenAI's Responses API, stateless, on the chat
// completion path. The request's input items become chat messages
// (instructions first, as a system message), its tools and tool_choice
// chat's, text.format structured output; the reply comes back as output
// items (responses_out.go), whole or as the semantic stream events
// (responses_stream.go).
//
// Nothing is stored: store true is answered as if false (the response says
// store: false), and previous_response_id, conversation and item_reference
// inputs, which need a stored response, are 400s. One reply per request (no
// n). vLLM's sampling extras (top_k, min_p, seed, stop, ignore_eos, ...)
// are taken as on chat.

// responsesRequest is a /v1/responses body.
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"` // a string or a list of items (responseInputItem)
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	Tools              json.RawMessage   `json:"tools"`       // [{"type":"function","name","description","parameters","strict"}]
	ToolChoice         json.RawMessage   `json:"tool_choice"` // none, auto, required or {"type":"function","name"}
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	Text               *responseText     `json:"text"`
	Stream             bool              `json:"stream"`
	Store              *bool             `json:"store"` // never stored, whatever it says
	PreviousResponseID *string           `json:"previous_response_id"`
	Conversation       json.RawMessage   `json:"conversation"`
	Background         bool              `json:"background"`
	TopLogprobs        *int              `json:"top_logprobs"`
	Metadata           map[string]string `json:"metadata"` // echoed
	User               *string           `json:"user"`     // echoed

	// vLLM's sampling extras, as on chat.
	TopK              *int            `json:"top_k"`
	MinP              *float64        `json:"min_p"`
	PresencePenalty   *float64        `json:"presence_penalty"`
	FrequencyPenalty  *float64        `json:"frequency_penalty"`
	RepetitionPenalty *float64        `json:"repetition_penalty"`
	Seed              *int64          `json:"seed"`
	Stop              json.RawMessage `json:"stop"`
	StopTokenIDs      []int32         `json:"stop_token_ids"`
	IgnoreEOS         bool            `json:"ignore_eos"`
	Priority          int             `json:"priority"`
}

// responseText is the request's (and the echoed) "text": its format is
// {"type":"text"}, {"type":"json_object"} or {"type":"json_schema","name",
// "schema","strict"}.
type responseText struct {
	Format json.RawMessage `json:"format"`
}

// responseInputItem is one item of a list input: a message (type
// "message" or absent), a function_call the model made, or a
// function_call_output the client sends back.
type responseInputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // message: a string or a list of parts
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Args    *string         `json:"arguments"` // function_call: JSON text
	Output  json.RawMessage `json:"output"`    // function_call_output: a string or a list of text parts
}

func (q *responsesRequest) model() string { return q.Model }

// unsupported refuses what needs a stored response or what kiln does not
// do, rather than answer something else than asked.
func (q *responsesRequest) unsupported() error {
	switch {
	case q.PreviousResponseID != nil && *q.PreviousResponseID != "":
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "previous_response_id", Code: "previous_response_not_found",
			Message: "previous_response_id: this server stores no responses (it is stateless); send the whole conversation in input"}
	case !isNull(q.Conversation):
		return badRequest("conversation", "conversation: this server stores no conversations (it is stateless); send the whole conversation in input")
	case q.Background:
		return badRequest("background", "background responses are not supported (nothing is stored to poll)")
	case q.TopLogprobs != nil && *q.TopLogprobs != 0:
		return badRequest("top_logprobs", "top_logprobs is not supported on /v1/responses (use /v1/chat/completions)")
	case isNull(q.Input):
		return badRequest("input", "input is required: a string or a list of items")
	}
	return nil
}

// chatRequest is the chat completion request q asks for, and its
// text.format as structured output (nil: plain text). format is the
// model's tool-call format (toolFormat), for the calls in input.
func (q *responsesRequest) chatRequest(format string) (*chatRequest, *constraintSpec, error) {
	msgs, err := q.messages(format)
	if err != nil {
		return nil, nil, err
	}
	tools, err := chatTools(q.Tools)
	if err != nil {
		return nil, nil, err
	}
	choice, err := chatToolChoice(q.ToolChoice)
	if err != nil {
		return nil, nil, err
	}
	spec, err := q.formatSpec()
	if err != nil {
		return nil, nil, err
	}
	cq := &chatRequest{
		samplingRequest: samplingRequest{Model: q.Model, MaxTokens: q.MaxOutputTokens, Temperature: q.Temperature, TopP: q.TopP,
			TopK: q.TopK, MinP: q.MinP, PresencePenalty: q.PresencePenalty, FrequencyPenalty: q.FrequencyPenalty,
			RepetitionPenalty: q.RepetitionPenalty, Seed: q.Seed, Stop: q.Stop, StopTokenIDs: q.StopTokenIDs,
			IgnoreEOS: q.IgnoreEOS, Priority: q.Priority, Stream: q.Stream},
		Messages: msgs, Tools: tools, ToolChoice: choice, ParallelToolCalls: q.ParallelToolCalls,
	}
	return cq, spec, nil
}

// messages turns instructions and input into chat messages. Consecutive
// function_call items become one assistant turn (parallel calls), shown
// as its content in the model's call format (callsText) since the chat
// templates see text only; a function_call_output is a tool turn.
func (q *responsesRequest) messages(format string) ([]chatMessage, error) {
	var msgs []chatMessage
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	if q.Instructions != nil && *q.Instructions != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: str(*q.Instructions)})
	}
	var text string
	if json.Unmarshal(q.Input, &text) == nil {
		return append(msgs, chatMessage{Role: "user", Content: str(text)}), nil
	}
	var items []responseInputItem
	if err := json.Unmarshal(q.Input, &items); err != nil {
		return nil, badRequest("input", "input must be a string or a list of items (messages, function_call, function_call_output)")
	}
	if len(items) == 0 {
		return nil, badRequest("input", "input is an empty list")
	}
	var calls []toolCall // the pending assistant turn's
	flush := func() {
		if len(calls) > 0 {
			raw, _ := json.Marshal(calls)
			msgs = append(msgs, chatMessage{Role: "assistant", Content: str(callsText(format, calls)), ToolCalls: raw})
			calls = nil
		}
	}
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "", "message":
			flush()
			switch it.Role {
			case "user", "assistant", "system", "developer":
			default:
				return nil, badRequest(param+".role", "%s.role %q: want user, assistant, system or developer", param, it.Role)
			}
			t, err := inputText(it.Content)
			if err != nil {
				return nil, badRequest(param+".content", "%s.content: %v", param, err)
			}
			msgs = append(msgs, chatMessage{Role: it.Role, Content: str(t)})
		case "function_call":
			if it.Name == "" || it.Args == nil {
				return nil, badRequest(param, "%s: a function_call needs name and arguments", param)
			}
			calls = append(calls, toolCall{Index: len(calls), ID: it.CallID, Type: "function", Function: toolFunction{Name: it.Name, Arguments: *it.Args}})
		case "function_call_output":
			flush()
			if it.CallID == "" {
				return nil, badRequest(param+".call_id", "%s: a function_call_output needs the call_id of its call", param)
			}
			t, err := inputText(it.Output)
			if err != nil {
				return nil, badRequest(param+".output", "%s.output: %v", param, err)
			}
			msgs = append(msgs, chatMessage{Role: "tool", Content: str(t)})
		case "item_reference":
			return nil, badRequest(param, "%s: item_reference needs a stored item; this server stores none (send the item itself)", param)
		default:
			return nil, badRequest(param+".type", "%s.type %q is not supported: want message, function_call or function_call_output", param, it.Type)
		}
	}
	flush()
	return msgs, nil
}

// callsText shows calls the model made as the text it writes for them in
// format (toolFormat): what the tool parsers read back out of a reply.
//
//	hermes   <tool_call>\n{"name": N, "arguments": A}\n</tool_call>, one per call
//	mistral  [TOOL_CALLS] [{"name": N, "arguments": A}, ...]
//	llama3   {"name": N, "parameters": A}, several joined by ";"
func callsText(format string, calls []toolCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		args := c.Function.Arguments
		if !json.Valid([]byte(args)) { // shown as the string it is
			b, _ := json.Marshal(args)
			args = string(b)
		}
		name, _ := json.Marshal(c.Function.Name)
		switch format {
		case "mistral":
			parts[i] = fmt.Sprintf(`{"name": %s, "arguments": %s}`, name, args)
		case "llama3":
			parts[i] = fmt.Sprintf(`{"name": %s, "parameters": %s}`, name, args)
		default:
			parts[i] = fmt.Sprintf("<tool_call>\n{\"name\": %s, \"arguments\": %s}\n</tool_call>", name, args)
		}
	}
	switch format {
	case "mistral":
		return "[TOOL_CALLS] [" + strings.Join(parts, ", ") + "]"
	case "llama3":
		return strings.Join(parts, "; ")
	}
	return strings.Join(parts, "\n")
}

// inputText reads a message's content or a call's output: a string, or a
// list of text parts (input_text, output_text) joined with "\n" as chat
// joins its parts.
func inputText(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("want a string or a list of input_text parts")
	}
	texts := make([]string, len(parts))
	for k, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			texts[k] = p.Text
		default:
			return "", fmt.Errorf("part %d has type %q; only input_text and output_text parts are supported", k, p.Type)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// chatTools turns the Responses API's flat function tools
// {"type":"function","name","description","parameters","strict"} into
// chat's {"type":"function","function":{...}}.
func chatTools(raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var in []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, badRequest("tools", "tools must be a list of {\"type\":\"function\",\"name\",\"parameters\"}")
	}
	out := make([]toolDef, len(in))
	for i, t := range in {
		if t.Type != "function" {
			return nil, badRequest(fmt.Sprintf("tools[%d].type", i), "tools[%d].type %q is not supported: only function tools", i, t.Type)
		}
		if t.Name == "" {
			return nil, badRequest(fmt.Sprintf("tools[%d].name", i), "tools[%d] needs a name", i)
		}
		out[i].Type = "function"
		out[i].Function.Name, out[i].Function.Description, out[i].Function.Parameters = t.Name, t.Description, t.Parameters
	}
	b, err := json.Marshal(out)
	return b, err
}

// chatToolChoice turns tool_choice's {"type":"function","name"} into
// chat's {"type":"function","function":{"name"}}; strings pass.
func chatToolChoice(raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "none", "auto", "required":
			return raw, nil
		}
		return nil, badRequest("tool_choice", "tool_choice %q: want none, auto, required or {\"type\":\"function\",\"name\":...}", s)
	}
	var obj struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Type != "function" || obj.Name == "" {
		return nil, badRequest("tool_choice", "tool_choice must be none, auto, required or {\"type\":\"function\",\"name\":...}")
	}
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": obj.Name}})
	return b, nil
}

// formatSpec reads text.format as structured output; nil for plain text.
func (q *responsesRequest) formatSpec() (*constraintSpec, error) {
	if q.Text == nil || isNull(q.Text.Format) {
		return nil, nil
	}
	var f struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(q.Text.Format, &f); err != nil {
		return nil, badRequest("text.format", "text.format must be an object with a type")
	}
	switch f.Type {
	case "text":
		return nil, nil
	case "json_object":
		return &constraintSpec{kind: "json_object", param: "text.format"}, nil
	case "json_schema":
		if isNull(f.Schema) {
			return nil, badRequest("text.format.schema", "text.format json_schema needs a schema")
		}
		return &constraintSpec{kind: "json_schema", text: string(f.Schema), param: "text.format"}, nil
	}
	return nil, badRequest("text.format.type", "text.format type %q: want text, json_object or json_schema", f.Type)
}

// handleResponses serves POST /v1/responses.
func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	var q responsesRequest
	sl := s.openRequest(w, r, &q)
	if sl == nil {
		return
	}
	defer s.reg.release(sl)
	cq, format, err := q.chatRequest(toolFormat(sl.m.Template.Source()))
	if err != nil {
		writeError(w, err)
		return
	}
	prompt, tools, toolSpec, err := chatPrompt(sl.m, cq)
	if err != nil {
		writeError(w, inputParam(err))
		return
	}
	j, err := s.newJob(sl, &cq.samplingRequest, [][]int32{prompt}, "input")
	if err != nil {
		writeError(w, inputParam(err))
		return
	}
	if format != nil && toolSpec != nil {
		writeError(w, badRequest("tool_choice", "tool_choice %s constrains the reply: it does not combine with text.format %s", tools.kind, format.kind))
		return
	}
	if spec := firstSpec(format, toolSpec); spec != nil {
		if j.constraint, err = s.constraint(sl, spec); err != nil {
			writeError(w, err)
			return
		}
	}
	items, err := j.start(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	defer j.cancel()
	c := &chatWriter{s: s, j: j, tok: sl.m.Tokenizer, model: q.Model, text: make([]strings.Builder, 1),
		lps: make([][]chatTokenLogprob, 1), reasons: make([]*string, 1), tools: tools, holding: []bool{tools != nil}}
	rw := &responsesWriter{c: c, q: &q, id: newID("resp_"), created: s.cfg.Now().Unix()}
	if q.Stream {
		rw.stream(r.Context(), w, items)
	} else {
		rw.whole(r.Context(), w, items)
	}
}

// handleStoredResponse answers the routes of stored responses (GET and
// DELETE /v1/responses/{id}): 404, since none is ever stored, saying so
// rather than "no route".
func handleStoredResponse(w http.ResponseWriter, r *http.Request) {
	writeError(w, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "response_id", Code: "response_not_found",
		Message: fmt.Sprintf("no response %q: this server stores no responses (it is stateless)", r.PathValue("id"))})
}

// firstSpec is the first non-nil spec.
func firstSpec(a, b *constraintSpec) *constraintSpec {
	if a != nil {
		return a
	}
	return b
}

// inputParam renames the chat fields an error names onto this API's:
// messages is input, max_tokens max_output_tokens.
func inputParam(err error) error {
	ae := asAPIError(err)
	if ae.Status != http.StatusBadRequest {
		return err
	}
	out := *ae
	switch {
	case out.Param == "messages" || strings.HasPrefix(out.Param, "messages["):
		out.Param = "input"
	case strings.HasPrefix(out.Param, "tools[") && strings.Contains(out.Param, ".function."):
		out.Param = strings.Replace(out.Param, ".function.", ".", 1) // the flat tools' field
	case out.Param == "max_tokens":
		out.Param = "max_output_tokens"
		out.Message = strings.ReplaceAll(out.Message, "max_tokens", "max_output_tokens")
	}
	return &out
}
