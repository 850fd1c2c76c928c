package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Tool calls (OpenAI's tools / tool_choice), as vLLM serves them:
//
//	none       the tools are not shown to the model; plain text
//	auto       the tools are rendered by the chat template (its "tools"
//	           variable); calls are parsed out of the reply in the format
//	           the template teaches (toolFormat: Hermes / Qwen, Mistral,
//	           Llama 3)
//	required   the reply is constrained to a JSON list of calls
//	           [{"name": N, "parameters": {...}}, ...] (vLLM's schema), one
//	           alternative per tool with its parameters' schema; at most
//	           maxToolCalls of them, or one with parallel_tool_calls false
//	named      {"type":"function","function":{"name":N}}: the reply is
//	           constrained to N's parameters, which become its arguments
//
// Constrained calls always parse when the reply finishes with "stop";
// their finish_reason is then "tool_calls". A constrained reply cut off
// by max_tokens (finish_reason "length") keeps the calls that were
// complete (completeCalls) and has content null, never the raw JSON; with
// none complete it has neither. parallel_tool_calls false keeps only the
// first call an auto reply makes. Streams (chat, Responses, Messages)
// send every call's arguments as they are generated (tools_stream.go): a
// constrained reply's from its first byte, an auto reply's from where it
// reads as a call in the template's format. An auto reply's text streams
// as content up to where a call starts (chatWriter.release: text that may
// be a call's start is held back until it can tell).

// maxToolCalls bounds the list a required tool choice may reply with
// (parallel_tool_calls true, the default): a grammar with no upper bound
// let a reply run on with calls until max_tokens.
const maxToolCalls = 16

// toolDef is one entry of "tools".
type toolDef struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// toolMode is a request's resolved tools.
type toolMode struct {
	kind   string          // auto, required, named
	max    int             // calls kept: 1 with parallel_tool_calls false, else maxToolCalls
	format string          // auto: hermes, mistral or llama3 (toolFormat)
	name   string          // named: the function
	tools  json.RawMessage // as sent, for the template
}

type toolCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"` // function; omitted in a stream's later deltas of a call
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"` // JSON text
}

// parseTools reads tools and tool_choice; nil means no tool handling.
// A constrained mode also returns the structured-output spec. maxCalls is
// how many calls a reply may make: 1 for parallel_tool_calls false, else
// maxToolCalls.
func parseTools(rawTools, rawChoice json.RawMessage, maxCalls int) (*toolMode, *constraintSpec, error) {
	var tools []toolDef
	if !isNull(rawTools) {
		if err := json.Unmarshal(rawTools, &tools); err != nil {
			return nil, nil, badRequest("tools", "tools must be a list of {\"type\":\"function\",\"function\":{...}}")
		}
	}
	choice := "auto"
	named := ""
	if !isNull(rawChoice) {
		var s string
		if json.Unmarshal(rawChoice, &s) == nil {
			choice = s
		} else {
			var obj struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if err := json.Unmarshal(rawChoice, &obj); err != nil || obj.Type != "function" || obj.Function.Name == "" {
				return nil, nil, badRequest("tool_choice", "tool_choice must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\":...}}")
			}
			choice, named = "named", obj.Function.Name
		}
	}
	switch choice {
	case "none", "auto", "required", "named":
	default:
		return nil, nil, badRequest("tool_choice", "tool_choice %q: want none, auto, required or a named function", choice)
	}
	if len(tools) == 0 {
		if choice == "required" || choice == "named" {
			return nil, nil, badRequest("tool_choice", "tool_choice %s needs tools", choice)
		}
		return nil, nil, nil
	}
	if choice == "none" {
		return nil, nil, nil
	}
	seen := map[string]bool{}
	var alts, defs []string
	var namedParams json.RawMessage
	for i, t := range tools {
		f := t.Function
		if t.Type != "function" || f.Name == "" {
			return nil, nil, badRequest(fmt.Sprintf("tools[%d]", i), "tools[%d]: want type function with a name", i)
		}
		if seen[f.Name] {
			return nil, nil, badRequest(fmt.Sprintf("tools[%d].function.name", i), "two tools are named %q", f.Name)
		}
		seen[f.Name] = true
		params := f.Parameters
		if isNull(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		if !json.Valid(params) || !strings.HasPrefix(strings.TrimSpace(string(params)), "{") {
			return nil, nil, badRequest(fmt.Sprintf("tools[%d].function.parameters", i), "tools[%d].function.parameters must be a JSON Schema object", i)
		}
		name, _ := json.Marshal(f.Name)
		key := toolDefKey(i)
		rebased, err := rebaseRefs(params, "#/$defs/"+key)
		if err != nil {
			return nil, nil, badRequest(fmt.Sprintf("tools[%d].function.parameters", i), "tools[%d].function.parameters: %v", i, err)
		}
		defs = append(defs, fmt.Sprintf(`"%s":%s`, key, rebased))
		alts = append(alts, fmt.Sprintf(`{"type":"object","properties":{"name":{"const":%s},"parameters":{"$ref":"#/$defs/%s"}},"required":["name","parameters"],"additionalProperties":false}`, name, key))
		if f.Name == named {
			namedParams = params
		}
	}
	m := &toolMode{kind: choice, name: named, tools: rawTools, max: maxCalls}
	switch choice {
	case "required":
		// Each tool's parameters resolve their refs against themselves
		// (toolschema.go), as they do alone with a named tool_choice.
		schema := `{"$defs":{` + strings.Join(defs, ",") + `},"type":"array","minItems":1,"maxItems":` + fmt.Sprint(maxCalls) + `,"items":{"anyOf":[` + strings.Join(alts, ",") + `]}}`
		return m, &constraintSpec{kind: "json_schema", text: schema, param: "tools"}, nil
	case "named":
		if namedParams == nil {
			return nil, nil, badRequest("tool_choice", "tool_choice names %q, which is not among the tools", named)
		}
		return m, &constraintSpec{kind: "json_schema", text: string(namedParams), param: "tools"}, nil
	}
	return m, nil, nil
}

// hermesCall matches one <tool_call>...</tool_call> block (the closing
// tag may be cut off at the end of the reply).
var hermesCall = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|$)`)

// calls parses a finished reply into tool calls and the content left
// over; ok is false when the reply holds no call (it stays content). Of an
// auto reply's calls, the first m.max are kept (parallel_tool_calls).
func (m *toolMode) calls(text string) (calls []toolCall, content *string, ok bool) {
	calls, content, ok = m.parse(text)
	if m.max > 0 && len(calls) > m.max {
		calls = calls[:m.max]
	}
	return calls, content, ok
}

// completeCalls parses a constrained reply cut off by max_tokens: the
// calls of a required list that were complete, none of a named call
// (its arguments are cut).
func (m *toolMode) completeCalls(text string) []toolCall {
	if m.kind != "required" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil
	}
	var calls []toolCall
	for dec.More() {
		var c struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		}
		if dec.Decode(&c) != nil || c.Name == "" {
			break // the cut one
		}
		args := c.Parameters
		if isNull(args) {
			args = json.RawMessage("{}")
		}
		calls = append(calls, toolCall{Index: len(calls), ID: newID("call_"), Type: "function",
			Function: toolFunction{Name: c.Name, Arguments: string(args)}})
	}
	return calls
}

// parse is calls before the bound.
func (m *toolMode) parse(text string) (calls []toolCall, content *string, ok bool) {
	add := func(name string, args json.RawMessage) {
		if isNull(args) {
			args = json.RawMessage("{}")
		}
		calls = append(calls, toolCall{Index: len(calls), ID: newID("call_"), Type: "function",
			Function: toolFunction{Name: name, Arguments: string(args)}})
	}
	switch m.kind {
	case "named":
		if !json.Valid([]byte(text)) {
			return nil, nil, false
		}
		add(m.name, json.RawMessage(strings.TrimSpace(text)))
		return calls, nil, true
	case "required":
		var list []struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		}
		if json.Unmarshal([]byte(text), &list) != nil || len(list) == 0 {
			return nil, nil, false
		}
		for _, c := range list {
			add(c.Name, c.Parameters)
		}
		return calls, nil, true
	}
	switch m.format {
	case "mistral":
		return mistralCalls(text, add, &calls)
	case "llama3":
		return llama3Calls(text, add, &calls)
	}
	// auto, Hermes / Qwen blocks.
	rest := text
	for _, match := range hermesCall.FindAllStringSubmatch(text, -1) {
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal([]byte(match[1]), &c) != nil || c.Name == "" {
			return nil, nil, false // a malformed call: leave the reply as text
		}
		add(c.Name, c.Arguments)
		rest = strings.Replace(rest, match[0], "", 1)
	}
	if len(calls) == 0 {
		return nil, nil, false
	}
	if rest = strings.TrimSpace(rest); rest != "" {
		content = &rest
	}
	return calls, content, true
}

// toolFormat names the tool-call format a chat template teaches its
// model, from the markers the template prints (vLLM makes the operator
// pick a --tool-call-parser; the template already says it):
//
//	hermes   <tool_call>{"name": ..., "arguments": {...}}</tool_call>   (Hermes, Qwen 2/2.5/3)
//	mistral  [TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]      (Mistral)
//	llama3   {"name": ..., "parameters": {...}}, or after <|python_tag|> (Llama 3.1+)
func toolFormat(template string) string {
	switch {
	case strings.Contains(template, "[TOOL_CALLS]"):
		return "mistral"
	case strings.Contains(template, "<|python_tag|>") || strings.Contains(template, "ipython"):
		return "llama3"
	}
	return "hermes"
}

// mistralCalls parses "[TOOL_CALLS] [{...}, ...]" (text before the marker
// is content).
func mistralCalls(text string, add func(string, json.RawMessage), calls *[]toolCall) ([]toolCall, *string, bool) {
	before, after, found := strings.Cut(text, "[TOOL_CALLS]")
	if !found {
		return nil, nil, false
	}
	var list []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(after)), &list) != nil || len(list) == 0 {
		return nil, nil, false
	}
	for _, c := range list {
		if c.Name == "" {
			return nil, nil, false
		}
		add(c.Name, c.Arguments)
	}
	var content *string
	if b := strings.TrimSpace(before); b != "" {
		content = &b
	}
	return *calls, content, true
}

// llama3Calls parses Llama 3's JSON calls: the whole reply (after an
// optional <|python_tag|>) is {"name": ..., "parameters": {...}}, or
// several separated by ";".
func llama3Calls(text string, add func(string, json.RawMessage), calls *[]toolCall) ([]toolCall, *string, bool) {
	t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "<|python_tag|>"))
	if !strings.HasPrefix(t, "{") {
		return nil, nil, false
	}
	for _, part := range strings.Split(t, ";") {
		var c struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
			Arguments  json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(part)), &c) != nil || c.Name == "" {
			return nil, nil, false
		}
		args := c.Parameters
		if isNull(args) {
			args = c.Arguments
		}
		add(c.Name, args)
	}
	return *calls, nil, true
}

// callMarker is the text that starts a call in format, after other text
// ("": llama3's calls are the whole reply).
func callMarker(format string) string {
	switch format {
	case "mistral":
		return "[TOOL_CALLS]"
	case "llama3":
		return ""
	}
	return "<tool_call>"
}

// markerStart is the length of the longest end of text that is a proper
// start of marker: text that may yet become it.
func markerStart(text, marker string) int {
	for k := min(len(text), len(marker)-1); k > 0; k-- {
		if strings.HasSuffix(text, marker[:k]) {
			return k
		}
	}
	return 0
}

// mayBeCall reports whether text (a reply's start) may still turn out to
// be a tool call in format: auto mode holds it back while it does.
func mayBeCall(text, format string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	prefixOf := func(tag string) bool {
		if len(t) < len(tag) {
			return strings.HasPrefix(tag, t)
		}
		return strings.HasPrefix(t, tag)
	}
	switch format {
	case "mistral":
		return prefixOf("[TOOL_CALLS]")
	case "llama3":
		return prefixOf("<|python_tag|>") || prefixOf("{")
	}
	return prefixOf("<tool_call>")
}
