package server_test

import (
	"strings"
	"testing"

	"kiln/engine"
	"kiln/server"
)

// TestErrorStatuses sends each kind of bad request and checks the status
// and OpenAI's envelope: bad input is never a 500.
func TestErrorStatuses(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit", MaxBodyBytes: 4096}, nil)
	auth := []string{"Authorization", "Bearer sekrit"}
	cases := []struct {
		name, path, body string
		header           []string
		status           int
		param            string
	}{
		{"no key", "/v1/completions", `{"model":"tiny","prompt":"a"}`, nil, 401, ""},
		{"wrong key", "/v1/completions", `{"model":"tiny","prompt":"a"}`, []string{"Authorization", "Bearer nope"}, 401, ""},
		{"malformed json", "/v1/completions", `{"model":"tiny","prompt":`, auth, 400, ""},
		{"not an object", "/v1/completions", `[1,2]`, auth, 400, ""},
		{"empty body", "/v1/completions", ``, auth, 400, ""},
		{"trailing data", "/v1/completions", `{"model":"tiny","prompt":"a"} {}`, auth, 400, ""},
		{"unknown model", "/v1/completions", `{"model":"nope","prompt":"a"}`, auth, 404, "model"},
		{"a path as model", "/v1/completions", `{"model":"/etc/passwd","prompt":"a"}`, auth, 404, "model"},
		{"no model", "/v1/completions", `{"prompt":"a"}`, auth, 400, "model"},
		{"negative temperature", "/v1/completions", `{"model":"tiny","prompt":"a","temperature":-1}`, auth, 400, "temperature"},
		{"top_p zero", "/v1/completions", `{"model":"tiny","prompt":"a","top_p":0}`, auth, 400, "top_p"},
		{"string max_tokens", "/v1/completions", `{"model":"tiny","prompt":"a","max_tokens":"9"}`, auth, 400, "max_tokens"},
		{"zero max_tokens", "/v1/completions", `{"model":"tiny","prompt":"a","max_tokens":0}`, auth, 400, "max_tokens"},
		{"max_tokens past context", "/v1/completions", `{"model":"tiny","prompt":"a","max_tokens":100000}`, auth, 400, "max_tokens"},
		{"prompt token out of vocab", "/v1/completions", `{"model":"tiny","prompt":[1,2,99999]}`, auth, 400, "prompt"},
		{"empty prompt list", "/v1/completions", `{"model":"tiny","prompt":[]}`, auth, 400, "prompt"},
		{"prompt of bools", "/v1/completions", `{"model":"tiny","prompt":[true]}`, auth, 400, "prompt"},
		{"n zero", "/v1/completions", `{"model":"tiny","prompt":"a","n":0}`, auth, 400, "n"},
		{"n too many", "/v1/completions", `{"model":"tiny","prompt":"a","n":1000}`, auth, 400, "n"},
		{"logprobs too many", "/v1/completions", `{"model":"tiny","prompt":"a","logprobs":50}`, auth, 400, "logprobs"},
		{"logit_bias key", "/v1/completions", `{"model":"tiny","prompt":"a","logit_bias":{"x":1}}`, auth, 400, "logit_bias"},
		{"logit_bias value", "/v1/completions", `{"model":"tiny","prompt":"a","logit_bias":{"3":500}}`, auth, 400, "logit_bias"},
		{"stop of numbers", "/v1/completions", `{"model":"tiny","prompt":"a","stop":[1]}`, auth, 400, "stop"},
		{"echo streamed", "/v1/completions", `{"model":"tiny","prompt":"a","echo":true,"stream":true}`, auth, 400, "echo"},
		{"max_tokens 0 without echo", "/v1/completions", `{"model":"tiny","prompt":"a","max_tokens":0}`, auth, 400, "max_tokens"},
		{"prompt_logprobs too many", "/v1/completions", `{"model":"tiny","prompt":"a","prompt_logprobs":50}`, auth, 400, "prompt_logprobs"},
		{"prompt_logprobs on chat", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"prompt_logprobs":1}`, auth, 400, "prompt_logprobs"},
		{"presence too big", "/v1/completions", `{"model":"tiny","prompt":"a","presence_penalty":3}`, auth, 400, "presence_penalty"},
		{"body too large", "/v1/completions", `{"model":"tiny","prompt":"` + strings.Repeat("a", 5000) + `"}`, auth, 413, ""},
		{"no messages", "/v1/chat/completions", `{"model":"tiny","messages":[]}`, auth, 400, "messages"},
		{"bad role", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"wizard","content":"hi"}]}`, auth, 400, "messages[0].role"},
		{"image part", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, auth, 400, "messages[0].content"},
		{"top_logprobs without logprobs", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"top_logprobs":2}`, auth, 400, "top_logprobs"},
		{"response_format type", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"xml"}}`, auth, 400, "response_format"},
		{"schema keyword not enforced", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","not":{}}}}}`, auth, 400, "response_format"},
		{"bad grammar", "/v1/completions", `{"model":"tiny","prompt":"a","guided_grammar":"root ::= (("}`, auth, 400, "guided_grammar"},
		{"two kinds", "/v1/completions", `{"model":"tiny","prompt":"a","guided_choice":["a"],"guided_grammar":"root ::= \"a\""}`, auth, 400, ""},
		{"empty choice", "/v1/completions", `{"model":"tiny","prompt":"a","guided_choice":[]}`, auth, 400, "guided_choice"},
		{"required without tools", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"tool_choice":"required"}`, auth, 400, "tool_choice"},
		{"tool parameters not enforced", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"tool_choice":"required","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}}}]}`, auth, 400, "tools"},
		{"regex feature not supported", "/v1/completions", `{"model":"tiny","prompt":"a","guided_regex":"(?=a)a"}`, auth, 400, "guided_regex"},
		{"tokenize neither", "/tokenize", `{"model":"tiny"}`, auth, 400, "prompt"},
		{"detokenize out of vocab", "/detokenize", `{"model":"tiny","tokens":[-1]}`, auth, 400, "tokens"},
		{"no route", "/v1/audio/speech", `{}`, auth, 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := ts.post(t, c.path, c.body, c.header...)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			_, _, param, _ := errorOf(t, body)
			if c.param != "" && (param == nil || *param != c.param) {
				t.Errorf("param %v, want %q: %s", param, c.param, body)
			}
		})
	}
	// Probes and the scraper need no key.
	for _, p := range []string{"/health", "/metrics"} {
		if status, body := ts.get(t, p); status != 200 {
			t.Errorf("GET %s: %d %s", p, status, body)
		}
	}
}

// TestNBeyondMaxNumSeqs: an n the server's --max-num-seqs cannot run is a
// 400 that names the flag, so the operator knows what limits it.
func TestNBeyondMaxNumSeqs(t *testing.T) {
	ts := start(t, server.Config{}, &loader{cfg: engine.Config{MaxSeqs: 1}})
	status, _, body := ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"a","n":2,"max_tokens":2}`)
	msg, _, param, _ := errorOf(t, body)
	if status != 400 || param == nil || *param != "n" || !strings.Contains(msg, "--max-num-seqs 1") {
		t.Fatalf("n = 2 with --max-num-seqs 1: %d %s", status, body)
	}
}

// TestEngineRefusalParam: a request the engine refuses (here a prompt
// larger than the whole KV pool, which the server's own checks against the
// context do not catch) is a 400 naming the request's field, from the
// engine's typed error, not a trimmed message without a param.
func TestEngineRefusalParam(t *testing.T) {
	ts := start(t, server.Config{}, &loader{cfg: engine.Config{NumBlocks: 2}}) // 32 token slots
	prompt := strings.TrimSuffix(strings.Repeat("1,", 40), ",")
	for _, c := range []struct{ path, body, param string }{
		{"/v1/completions", `{"model":"tiny","prompt":[` + prompt + `],"max_tokens":2}`, "prompt"},
		{"/v1/chat/completions", `{"model":"tiny","max_tokens":2,"messages":[{"role":"user","content":"` + strings.Repeat("a b ", 40) + `"}]}`, "messages"},
	} {
		code, _, body := ts.post(t, c.path, c.body)
		if code != 400 {
			t.Fatalf("%s: status %d: %s", c.path, code, body)
		}
		msg, _, param, _ := errorOf(t, body)
		if param == nil || *param != c.param || !strings.Contains(msg, "KV cache") {
			t.Errorf("%s: %q with param %v, want the KV cache named on %q", c.path, msg, param, c.param)
		}
	}
}
