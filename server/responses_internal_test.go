package server

import (
	"testing"
)

// TestCallsTextParses: the text a function_call input item is shown as
// parses back, in each tool format, into the same calls (the format the
// model is taught is the one it is shown its past calls in).
func TestCallsTextParses(t *testing.T) {
	calls := []toolCall{
		{ID: "call_1", Type: "function", Function: toolFunction{Name: "get_time", Arguments: `{"tz":"UTC"}`}},
		{ID: "call_2", Type: "function", Function: toolFunction{Name: "get_weather", Arguments: `{"city":"Paris"}`}},
	}
	for _, format := range []string{"hermes", "mistral", "llama3"} {
		text := callsText(format, calls)
		m := &toolMode{kind: "auto", format: format, max: maxToolCalls}
		got, content, ok := m.calls(text)
		if !ok || content != nil || len(got) != len(calls) {
			t.Errorf("%s: %q parsed as %+v (content %v, ok %v)", format, text, got, content, ok)
			continue
		}
		for i := range calls {
			if got[i].Function != calls[i].Function {
				t.Errorf("%s: call %d %+v, want %+v", format, i, got[i].Function, calls[i].Function)
			}
		}
	}
}
