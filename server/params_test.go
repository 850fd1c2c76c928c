package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"kiln/server"
)

// TestErrorParams: every 400 names the request field at fault by its
// path in the request ("stop", "messages[1].content",
// "structured_outputs.choice"), as OpenAI's param does: never a Go name,
// a count, or nothing when a field is at fault.
func TestErrorParams(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	stops := make([]string, 65)
	for i := range stops {
		stops[i] = fmt.Sprintf("%q", fmt.Sprint("s", i))
	}
	chat := func(extra string) string {
		return `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":2` + extra + `}`
	}
	comp := func(extra string) string { return `{"model":"tiny","prompt":"a","max_tokens":2` + extra + `}` }
	cases := []struct {
		name, path, body, param string
	}{
		// Decoding: wrong JSON types, at any depth.
		{"string guided_choice", "/v1/completions", comp(`,"guided_choice":"a"`), "guided_choice"},
		{"number in guided_choice", "/v1/completions", comp(`,"guided_choice":["a",1]`), "guided_choice[1]"},
		{"string n", "/v1/completions", comp(`,"n":"2"`), "n"},
		{"object seed", "/v1/completions", comp(`,"seed":{}`), "seed"},
		{"list temperature", "/v1/chat/completions", chat(`,"temperature":[1]`), "temperature"},
		{"string stream_options.include_usage", "/v1/chat/completions", chat(`,"stream":true,"stream_options":{"include_usage":"yes"}`), "stream_options.include_usage"},
		{"number role", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"},{"role":7,"content":"x"}]}`, "messages[1].role"},
		{"string messages", "/v1/chat/completions", `{"model":"tiny","messages":"hi"}`, "messages"},
		{"string logprobs", "/v1/chat/completions", chat(`,"logprobs":"true"`), "logprobs"},
		{"string stop_token_ids entry", "/v1/completions", comp(`,"stop_token_ids":[1,"2"]`), "stop_token_ids[1]"},
		{"number logit_bias value", "/v1/completions", comp(`,"logit_bias":{"3":"x"}`), "logit_bias.3"},
		{"string guided_grammar type", "/v1/completions", comp(`,"guided_grammar":5`), "guided_grammar"},
		{"tokenize string messages", "/tokenize", `{"model":"tiny","messages":[{"role":"user","content":"hi","name":3}]}`, "messages[0].name"},
		{"detokenize string token", "/detokenize", `{"model":"tiny","tokens":[1,"x"]}`, "tokens[1]"},
		// Validation.
		{"65 stop strings", "/v1/completions", comp(`,"stop":[` + strings.Join(stops, ",") + `]`), "stop"},
		{"long stop string", "/v1/completions", comp(`,"stop":["` + strings.Repeat("x", 2000) + `"]`), "stop"},
		{"1025 stop token ids", "/v1/completions", comp(`,"stop_token_ids":[` + strings.TrimSuffix(strings.Repeat("1,", 1025), ",") + `]`), "stop_token_ids"},
		{"top_p above 1", "/v1/chat/completions", chat(`,"top_p":2`), "top_p"},
		{"min_p above 1", "/v1/completions", comp(`,"min_p":2`), "min_p"},
		{"repetition_penalty zero", "/v1/completions", comp(`,"repetition_penalty":0`), "repetition_penalty"},
		{"top_logprobs 21", "/v1/chat/completions", chat(`,"logprobs":true,"top_logprobs":21`), "top_logprobs"},
		{"logprobs 21", "/v1/completions", comp(`,"logprobs":21`), "logprobs"},
		{"structured_outputs choice type", "/v1/completions", comp(`,"structured_outputs":{"choice":"a"}`), "structured_outputs.choice"},
		{"structured_outputs not an object", "/v1/completions", comp(`,"structured_outputs":[1]`), "structured_outputs"},
		{"tool_calls not a list", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"},{"role":"assistant","tool_calls":"x"}]}`, "messages[2].tool_calls"},
		{"prompt_logprobs 21", "/v1/completions", comp(`,"prompt_logprobs":21`), "prompt_logprobs"},
		{"prompt_logprobs streamed", "/v1/completions", comp(`,"prompt_logprobs":1,"stream":true`), "prompt_logprobs"},
		{"tool without a name", "/v1/chat/completions", chat(`,"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{}}]`), "tools[1]"},
		{"two tools of one name", "/v1/chat/completions", chat(`,"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]`), "tools[1].function.name"},
		{"tool parameters of the wrong type", "/v1/chat/completions", chat(`,"tools":[{"type":"function","function":{"name":"a","parameters":"x"}}]`), "tools[0].function.parameters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := ts.post(t, c.path, c.body)
			if status != 400 {
				t.Fatalf("status %d, want 400: %.300s", status, body)
			}
			_, _, param, _ := errorOf(t, body)
			if param == nil || *param != c.param {
				got := "null"
				if param != nil {
					got = *param
				}
				t.Errorf("param %q, want %q: %.300s", got, c.param, body)
			}
		})
	}
}

// TestRefusedNotIgnored: fields a client set that would change nothing if
// kiln read them as absent are 400s naming them: an empty guided_regex or
// guided_grammar (no constraint is not what was asked), a key of
// structured_outputs kiln does not know (a typo would constrain nothing).
func TestRefusedNotIgnored(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	for _, c := range []struct{ extra, param string }{
		{`"guided_regex":""`, "guided_regex"},
		{`"guided_grammar":""`, "guided_grammar"},
		{`"structured_outputs":{"regex":""}`, "structured_outputs.regex"},
		{`"structured_outputs":{"grammar":""}`, "structured_outputs.grammar"},
		{`"structured_outputs":{"jsn":{}}`, "structured_outputs.jsn"},
		{`"structured_outputs":{"choice":["a"],"disable_any_whitespace":true}`, "structured_outputs.disable_any_whitespace"},
	} {
		status, _, body := ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"a","max_tokens":2,`+c.extra+`}`)
		if status != 400 {
			t.Errorf("%s: status %d, want 400: %.200s", c.extra, status, body)
			continue
		}
		msg, _, param, _ := errorOf(t, body)
		if param == nil || *param != c.param || !strings.Contains(msg, c.param) {
			t.Errorf("%s: param %v, message %q: want %q named", c.extra, param, msg, c.param)
		}
	}
	// Absent and null stay absent.
	for _, extra := range []string{`"guided_regex":null`, `"structured_outputs":null`, `"structured_outputs":{}`} {
		if status, _, body := ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"a","max_tokens":2,`+extra+`}`); status != 200 {
			t.Errorf("%s: status %d: %.200s", extra, status, body)
		}
	}
}

// TestMaxLogprobs: Config.MaxLogprobs (--max-logprobs) bounds the top
// logprobs per token of both endpoints and of render; the error names the
// field and the flag. Without it the bound is OpenAI's 20.
func TestMaxLogprobs(t *testing.T) {
	ts := start(t, server.Config{MaxLogprobs: 3}, nil)
	chatBody := func(k int) string {
		return fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"logprobs":true,"top_logprobs":%d}`, k)
	}
	compBody := func(k int) string {
		return fmt.Sprintf(`{"model":"tiny","prompt":"a","max_tokens":2,"logprobs":%d}`, k)
	}
	for _, c := range []struct {
		path, body, param string
		status            int
	}{
		{"/v1/chat/completions", chatBody(3), "", 200},
		{"/v1/chat/completions", chatBody(4), "top_logprobs", 400},
		{"/v1/chat/completions/render", chatBody(4), "top_logprobs", 400},
		{"/v1/completions", compBody(3), "", 200},
		{"/v1/completions", compBody(4), "logprobs", 400},
		{"/v1/completions/render", compBody(4), "logprobs", 400},
	} {
		status, _, body := ts.post(t, c.path, c.body)
		if status != c.status {
			t.Errorf("%s %s: status %d, want %d: %.200s", c.path, c.body, status, c.status, body)
			continue
		}
		if status == 400 {
			msg, _, param, _ := errorOf(t, body)
			if param == nil || *param != c.param || !strings.Contains(msg, "--max-logprobs") {
				t.Errorf("%s: param %v, message %q: want %q and the flag named", c.path, param, msg, c.param)
			}
		}
	}
	if _, err := server.New(server.Config{MaxLogprobs: 21, Load: func(context.Context, string, string) (*server.Model, error) { return nil, nil }}); err == nil {
		t.Error("MaxLogprobs 21 accepted: kiln returns at most 20")
	}
}
