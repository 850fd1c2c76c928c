package server

import (
	"encoding/json"
	"testing"

	"kiln/grammar"
)

func TestHermesCalls(t *testing.T) {
	m := &toolMode{kind: "auto", format: "hermes"}
	calls, content, ok := m.calls("Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>{\"name\":\"now\"}")
	if !ok || len(calls) != 2 || calls[0].Function.Name != "get_weather" || calls[1].Function.Name != "now" ||
		calls[1].Function.Arguments != "{}" || content == nil || *content != "Let me check." || calls[1].Index != 1 {
		t.Fatalf("calls %+v, content %v, ok %v", calls, content, ok)
	}
	var args map[string]string
	if json.Unmarshal([]byte(calls[0].Function.Arguments), &args) != nil || args["city"] != "Paris" {
		t.Errorf("arguments %q", calls[0].Function.Arguments)
	}
	for _, text := range []string{"just text", "<tool_call>{not json}</tool_call>", "<tool_call>{\"arguments\":{}}</tool_call>"} {
		if _, _, ok := m.calls(text); ok {
			t.Errorf("%q parsed as a call", text)
		}
	}
	for text, want := range map[string]bool{"": true, "  <to": true, "<tool_call>{": true, "<tool_cx": false, "Sure": false, "\n<tool_call>": true} {
		if got := mayBeCall(text, "hermes"); got != want {
			t.Errorf("mayBeCall(%q) = %v", text, got)
		}
	}
}

// TestAutoCallsBounded: parallel_tool_calls false keeps an auto reply's
// first call only.
func TestAutoCallsBounded(t *testing.T) {
	m := &toolMode{kind: "auto", format: "hermes", max: 1}
	calls, _, ok := m.calls("<tool_call>{\"name\":\"a\"}</tool_call><tool_call>{\"name\":\"b\"}</tool_call>")
	if !ok || len(calls) != 1 || calls[0].Function.Name != "a" {
		t.Errorf("calls %+v", calls)
	}
}

func TestParseTools(t *testing.T) {
	tools := json.RawMessage(`[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"integer"}}}}},{"type":"function","function":{"name":"b"}}]`)
	for _, c := range []struct {
		choice string
		kind   string
		spec   bool
		err    bool
	}{
		{``, "auto", false, false},
		{`"none"`, "", false, false},
		{`"required"`, "required", true, false},
		{`{"type":"function","function":{"name":"b"}}`, "named", true, false},
		{`{"type":"function","function":{"name":"zz"}}`, "", false, true},
		{`"sometimes"`, "", false, true},
	} {
		m, spec, err := parseTools(tools, json.RawMessage(c.choice), maxToolCalls)
		if (err != nil) != c.err || (spec != nil) != c.spec || (m == nil && c.kind != "") || (m != nil && m.kind != c.kind) {
			t.Errorf("tool_choice %s: mode %+v spec %v err %v", c.choice, m, spec, err)
		}
		if spec != nil {
			if _, err := spec.compile(); err != nil {
				t.Errorf("tool_choice %s: schema does not compile: %v", c.choice, err)
			}
		}
	}
	if _, _, err := parseTools(json.RawMessage(`[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]`), nil, maxToolCalls); err == nil {
		t.Error("two tools of one name accepted")
	}
}

func TestMistralAndLlama3Calls(t *testing.T) {
	mistral := &toolMode{kind: "auto", format: "mistral"}
	calls, content, ok := mistral.calls(`Checking. [TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]`)
	if !ok || len(calls) != 2 || calls[0].Function.Name != "a" || calls[0].Function.Arguments != `{"x": 1}` || content == nil || *content != "Checking." {
		t.Errorf("mistral: %+v %v %v", calls, content, ok)
	}
	if _, _, ok := mistral.calls("no calls here"); ok {
		t.Error("mistral: plain text parsed as a call")
	}
	llama := &toolMode{kind: "auto", format: "llama3"}
	calls, content, ok = llama.calls(`<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}; {"name": "now", "parameters": {}}`)
	if !ok || len(calls) != 2 || calls[0].Function.Arguments != `{"city": "Oslo"}` || calls[1].Function.Name != "now" || content != nil {
		t.Errorf("llama3: %+v %v %v", calls, content, ok)
	}
	if _, _, ok := llama.calls(`{"not": "a call"}`); ok {
		t.Error("llama3: an object without a name parsed as a call")
	}
	for _, c := range []struct {
		tmpl, want string
	}{
		{"{% if tools %}<tool_call>{% endif %}", "hermes"},
		{"[AVAILABLE_TOOLS]...[TOOL_CALLS]", "mistral"},
		{"<|start_header_id|>ipython<|end_header_id|>", "llama3"},
		{"{{ messages }}", "hermes"},
	} {
		if got := toolFormat(c.tmpl); got != c.want {
			t.Errorf("toolFormat(%q) = %s, want %s", c.tmpl, got, c.want)
		}
	}
	for text, want := range map[string]bool{"[TOOL": true, "[TOOL_CALLS] [": true, "Sure": false} {
		if got := mayBeCall(text, "mistral"); got != want {
			t.Errorf("mayBeCall(%q, mistral) = %v", text, got)
		}
	}
	for text, want := range map[string]bool{"{\"na": true, "<|python": true, "Hi": false} {
		if got := mayBeCall(text, "llama3"); got != want {
			t.Errorf("mayBeCall(%q, llama3) = %v", text, got)
		}
	}
}

// pydanticPerson is what pydantic's model_json_schema() gives for a Person
// with an Addr field whose zip is a nested model: refs into the tool's own
// $defs, one def referring to another.
const pydanticPerson = `{"$defs":{"Addr":{"properties":{"city":{"title":"City","type":"string","maxLength":8},"zip":{"$ref":"#/$defs/Zip"}},"required":["city","zip"],"title":"Addr","type":"object","additionalProperties":false},` +
	`"Zip":{"properties":{"code":{"enum":["75001","10115"],"title":"Code","type":"string"}},"required":["code"],"title":"Zip","type":"object","additionalProperties":false}},` +
	`"properties":{"home":{"$ref":"#/$defs/Addr"}},"required":["home"],"title":"Person","type":"object","additionalProperties":false}`

// locateAddr defines an Addr of another shape than pydanticPerson's, and
// recurses through its root ("#").
const locateAddr = `{"$defs":{"Addr":{"type":"object","properties":{"lat":{"type":"integer"},"near":{"$ref":"#"}},"required":["lat"],"additionalProperties":false}},` +
	`"type":"object","properties":{"at":{"$ref":"#/$defs/Addr"}},"required":["at"],"additionalProperties":false}`

// TestRequiredToolRefs: with tool_choice required, each tool's $refs
// resolve against its own parameters (they pointed into kiln's wrapper and
// failed with "points to nothing"), and two tools' $defs of one name keep
// their own shapes.
func TestRequiredToolRefs(t *testing.T) {
	tools := json.RawMessage(`[{"type":"function","function":{"name":"person","parameters":` + pydanticPerson + `}},` +
		`{"type":"function","function":{"name":"locate","parameters":` + locateAddr + `}}]`)
	_, spec, err := parseTools(tools, json.RawMessage(`"required"`), maxToolCalls)
	if err != nil {
		t.Fatal(err)
	}
	g, err := spec.compile()
	if err != nil {
		t.Fatalf("%v\nschema: %s", err, spec.text)
	}
	prog, err := grammar.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]bool{
		`[{"name":"person","parameters":{"home":{"city":"Paris","zip":{"code":"75001"}}}}]`:                                             true,
		`[{"name":"locate","parameters":{"at":{"lat":4,"near":{"at":{"lat":5}}}}}]`:                                                     true,
		`[{"name":"locate","parameters":{"at":{"lat":1}}},{"name":"person","parameters":{"home":{"city":"x","zip":{"code":"10115"}}}}]`: true,
		`[{"name":"person","parameters":{"home":{"lat":4}}}]`:                                                                           false, // locate's Addr
		`[{"name":"locate","parameters":{"at":{"city":"Paris","zip":{"code":"75001"}}}}]`:                                               false, // person's Addr
		`[{"name":"person","parameters":{"home":{"city":"Paris","zip":"75001"}}}]`:                                                      false, // Zip is an object
	} {
		m, err := grammar.NewMatcher(prog)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Advance([]byte(text)) == nil && m.CanEnd(); got != want {
			t.Errorf("%s: accepted %v, want %v", text, got, want)
		}
	}
	// The same parameters alone (a named tool_choice) compile as before.
	for _, name := range []string{"person", "locate"} {
		_, spec, err := parseTools(tools, json.RawMessage(`{"type":"function","function":{"name":"`+name+`"}}`), maxToolCalls)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := spec.compile(); err != nil {
			t.Errorf("named %s: %v", name, err)
		}
	}
}

// TestRebaseRefs: only string $refs in schema positions move; data
// (const, enum, default, examples), property names and key order stay.
func TestRebaseRefs(t *testing.T) {
	in := `{"$id":"urn:x","properties":{"$ref":{"type":"string"},"b":{"$ref":"#/$defs/B"},"a":{"const":{"$ref":"#/x"}}},"$defs":{"B":{"anyOf":[{"$ref":"#"},{"enum":[{"$ref":"#"}]}]}},"default":{"$ref":"#"},"x":1.50,"y":"<&>"}`
	want := `{"properties":{"$ref":{"type":"string"},"b":{"$ref":"#/$defs/tool3/$defs/B"},"a":{"const":{"$ref":"#/x"}}},"$defs":{"B":{"anyOf":[{"$ref":"#/$defs/tool3"},{"enum":[{"$ref":"#"}]}]}},"default":{"$ref":"#"},"x":1.50,"y":"<&>"}`
	got, err := rebaseRefs(json.RawMessage(in), "#/$defs/tool3")
	if err != nil || string(got) != want {
		t.Errorf("rebaseRefs:\n got %s (%v)\nwant %s", got, err, want)
	}
}
