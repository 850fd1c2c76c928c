package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMessagesChat: a Messages request's translation onto chat messages
// and tools: system first, tool_use written into the assistant turn in the
// template's format, tool_result blocks as tool messages in order among
// the user's text (is_error marked), tools and tool_choice as OpenAI's.
func TestMessagesChat(t *testing.T) {
	body := `{"model":"m","max_tokens":9,"system":[{"type":"text","text":"be brief"},{"type":"text","text":"be kind"}],
		"messages":[
			{"role":"user","content":"weather?"},
			{"role":"assistant","content":[{"type":"text","text":"let me look"},{"type":"tool_use","id":"toolu_1","name":"w","input":{"city": "Paris"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"sunny"}]},
				{"type":"tool_result","tool_use_id":"toolu_2","content":"no such city","is_error":true},{"type":"text","text":"thanks"}]}],
		"tools":[{"name":"w","description":"weather","input_schema":{"type":"object"}}],
		"tool_choice":{"type":"tool","name":"w","disable_parallel_tool_use":true},
		"stop_sequences":["END"],"metadata":{"user_id":"u"}}`
	var q messagesRequest
	if err := json.Unmarshal([]byte(body), &q); err != nil {
		t.Fatal(err)
	}
	if err := q.check(); err != nil {
		t.Fatal(err)
	}
	cq, err := q.chat("hermes")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range cq.Messages {
		var text string
		json.Unmarshal(m.Content, &text)
		got = append(got, m.Role+": "+text)
	}
	want := []string{
		"system: be brief\nbe kind",
		"user: weather?",
		"assistant: let me look\n<tool_call>\n{\"name\": \"w\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>",
		"tool: sunny",
		"tool: Error: no such city",
		"user: thanks",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("messages\n%q\nwant\n%q", got, want)
	}
	if string(cq.Stop) != `["END"]` || *cq.MaxTokens != 9 || cq.ParallelToolCalls == nil || *cq.ParallelToolCalls {
		t.Errorf("stop %s, max_tokens %d, parallel %v", cq.Stop, *cq.MaxTokens, cq.ParallelToolCalls)
	}
	if string(cq.Tools) != `[{"type":"function","function":{"name":"w","description":"weather","parameters":{"type":"object"}}}]` ||
		string(cq.ToolChoice) != `{"function":{"name":"w"},"type":"function"}` {
		t.Errorf("tools %s, tool_choice %s", cq.Tools, cq.ToolChoice)
	}
	if _, spec, err := parseTools(cq.Tools, cq.ToolChoice, 1); err != nil || spec == nil {
		t.Errorf("the tools do not parse as a named choice: %v", err)
	}

	for _, f := range []string{"mistral", "llama3"} {
		cq, err := q.chat(f)
		if err != nil {
			t.Fatal(err)
		}
		var text string
		json.Unmarshal(cq.Messages[2].Content, &text)
		if w := map[string]string{"mistral": `[TOOL_CALLS] [{"name": "w", "arguments": {"city":"Paris"}}]`,
			"llama3": `{"name": "w", "parameters": {"city":"Paris"}}`}[f]; !strings.HasSuffix(text, w) {
			t.Errorf("%s: assistant turn %q, want it to end %q", f, text, w)
		}
	}

	for name, bad := range map[string]string{
		"no max_tokens":        `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
		"no messages":          `{"model":"m","max_tokens":1,"messages":[]}`,
		"system role":          `{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]}`,
		"image":                `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image"}]}]}`,
		"user tool_use":        `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_use","name":"w"}]}]}`,
		"input not an object":  `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"w","input":[1]}]}]}`,
		"server tool":          `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"bash_20250124","name":"bash"}]}`,
		"tool_choice type":     `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"required"}}`,
		"empty stop_sequence":  `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"stop_sequences":[""]}`,
		"tool_choice no name":  `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"tool"}}`,
		"tool without schema":  `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"w"}]}`,
		"content not a string": `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":7}]}`,
	} {
		var q messagesRequest
		if err := json.Unmarshal([]byte(bad), &q); err != nil {
			t.Fatal(name, err)
		}
		err := q.check()
		if err == nil {
			_, err = q.chat("hermes")
		}
		if ae := asAPIError(err); err == nil || ae.Status != 400 {
			t.Errorf("%s: %v, want a 400", name, err)
		}
	}
}

// TestMessagesErrorTypes: statuses map onto Anthropic's error types.
func TestMessagesErrorTypes(t *testing.T) {
	for _, tc := range []struct {
		err error
		typ string
	}{
		{badRequest("x", "bad"), "invalid_request_error"},
		{errUnauthorized, "authentication_error"},
		{notFound("m"), "not_found_error"},
		{errQueueFull, "rate_limit_error"},
		{errDraining, "overloaded_error"},
		{internal(errShutdownCut), "api_error"},
	} {
		status, env := messagesError(tc.err)
		if env.Type != "error" || env.Error.Type != tc.typ || status != asAPIError(tc.err).Status || env.Error.Message == "" {
			t.Errorf("%v: %d %+v, want %s", tc.err, status, env, tc.typ)
		}
	}
}
