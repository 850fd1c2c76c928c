package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCallStreamPrefixes: fed every prefix of a tool-using reply, the
// deltas announce each call once (with its name) and then add to its
// arguments only, so that their concatenation is, at every step, a prefix
// of the arguments the whole reply parses to, and at the end equal to them.
func TestCallStreamPrefixes(t *testing.T) {
	for _, c := range []struct {
		m     *toolMode
		reply string
	}{
		{&toolMode{kind: "named", name: "get"}, ` {"city": "Paris, \"FR\"", "days": [1, 2, {"x": "}]"}], "n": -1.5e3, "ok": true}`},
		{&toolMode{kind: "required", max: maxToolCalls}, `[{"name": "a", "parameters": {"q": "x,y}"}}, {"name": "b\"c", "parameters": {}}, {"name": "d", "parameters": {"v": [true, null, 12]}}]`},
		{&toolMode{kind: "required", max: maxToolCalls}, "[\n{\"name\": \"a\", \"parameters\": {\"k\": 1}}\n]"},
		// auto, in each format the template may teach
		{&toolMode{kind: "auto", format: "hermes", max: maxToolCalls}, "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"q\": \"a}, <b>\"}}\n</tool_call>\n<tool_call>{\"arguments\": {\"n\": 12}, \"name\": \"b\"}</tool_call>"},
		{&toolMode{kind: "auto", format: "hermes", max: maxToolCalls}, ` <tool_call>{"name": "a"}</tool_call>`}, // no arguments: {}
		{&toolMode{kind: "auto", format: "hermes", max: 1}, `<tool_call>{"name": "a", "arguments": {"x": [1, {"y": "}"}]}}</tool_call><tool_call>{"name": "b", "arguments": {}}</tool_call>`},
		{&toolMode{kind: "auto", format: "mistral", max: maxToolCalls}, `[TOOL_CALLS] [{"name": "a", "arguments": {"k": "v"}}, {"name": "b", "arguments": {"n": -3}}]`},
		{&toolMode{kind: "auto", format: "llama3", max: maxToolCalls}, `<|python_tag|>{"name": "a", "parameters": {"k": "v"}}; {"name": "b", "parameters": {"n": 1.5}}`},
		{&toolMode{kind: "auto", format: "llama3", max: maxToolCalls}, `{"name": "a", "parameters": {"k": true}}`},
	} {
		whole, _, ok := c.m.calls(c.reply)
		if !ok {
			t.Fatalf("%s: the whole reply does not parse", c.reply)
		}
		var cs callStream
		names := map[int]string{}
		args := map[int]string{}
		for n := 0; n <= len(c.reply)+1; n++ {
			var deltas []toolCall
			if n <= len(c.reply) {
				deltas = cs.deltas(partialCalls(c.m, c.reply[:n]))
			} else { // the reply has ended: the rest of the parsed calls
				deltas, _ = cs.finish(c.m, whole, c.reply)
			}
			for _, d := range deltas {
				if n > len(c.reply) && (d.ID != "" || (d.Function.Arguments != "" && d.Function.Arguments != "{}")) {
					// Every call was announced and its arguments sent as the
					// reply came; only a call with none gets its {} at the end.
					t.Errorf("%s: call %d only streamed when the reply ended: %+v", c.reply, d.Index, d)
				}
				if d.ID != "" {
					if _, seen := names[d.Index]; seen {
						t.Fatalf("%s: call %d announced twice", c.reply, d.Index)
					}
					names[d.Index] = d.Function.Name
				} else if d.Function.Name != "" {
					t.Fatalf("%s: a later delta of call %d names it again", c.reply, d.Index)
				}
				args[d.Index] += d.Function.Arguments
				if d.Index >= len(whole) || !strings.HasPrefix(whole[d.Index].Function.Arguments, args[d.Index]) {
					t.Fatalf("%s[:%d]: call %d's arguments so far %q are not a prefix of the whole %+v", c.reply, n, d.Index, args[d.Index], whole)
				}
			}
		}
		if len(names) != len(whole) {
			t.Fatalf("%s: %d calls streamed, %d whole", c.reply, len(names), len(whole))
		}
		for k, w := range whole {
			if names[k] != w.Function.Name || args[k] != w.Function.Arguments || !json.Valid([]byte(args[k])) {
				t.Errorf("%s: call %d streamed as %q(%s), whole %q(%s)", c.reply, k, names[k], args[k], w.Function.Name, w.Function.Arguments)
			}
		}
	}
}

// TestReleaseText: an auto reply's text, fed in pieces, goes out as
// content up to where a call starts and never holds any of the call's
// marker; text that only looked like the marker's start goes out once it
// cannot be; a reply that starts as a call sends nothing.
func TestReleaseText(t *testing.T) {
	for _, c := range []struct {
		format, reply string
		content       string // released before the end
		calls         bool   // held as calls at the end
	}{
		{"hermes", "ok. <tool_call>\n{\"name\": \"a\"}</tool_call>", "ok. ", true},
		{"hermes", "  <tool_call>{\"name\": \"a\"}</tool_call>", "", true},
		{"hermes", "a <tool b <tool_c <", "a <tool b <tool_c ", false}, // the last "<" may still start one
		{"hermes", "plain text", "plain text", false},
		{"mistral", "sure [TOOL_CALLS] [{\"name\": \"a\"}]", "sure ", true},
		{"mistral", "[TOOL] x", "[TOOL] x", false},
		{"llama3", "{\"name\": \"a\", \"parameters\": {}}", "", true},
		{"llama3", "no <tool_call> here", "no <tool_call> here", false},
	} {
		for _, step := range []int{1, 3, 64} {
			w := &chatWriter{tools: &toolMode{kind: "auto", format: c.format}, text: make([]strings.Builder, 1), holding: []bool{true}, shown: []int{0}}
			var out strings.Builder
			for k := 0; k < len(c.reply); k += step {
				w.text[0].WriteString(c.reply[k:min(k+step, len(c.reply))])
				got := w.release(0)
				if m := callMarker(c.format); m != "" && strings.Contains(got, m) {
					t.Errorf("%s %q step %d: released %q, which holds the marker", c.format, c.reply, step, got)
				}
				out.WriteString(got)
			}
			if out.String() != c.content || w.holding[0] != c.calls {
				t.Errorf("%s %q step %d: released %q, holding %v; want %q, %v", c.format, c.reply, step, out.String(), w.holding[0], c.content, c.calls)
			}
		}
	}
}
