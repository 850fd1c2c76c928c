package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"kiln/engine"
	"kiln/server"
)

// fuzzHandler is a server over the tiny model with a 64-token context,
// so that no input can ask for a long generation.
func fuzzHandler(f *testing.F) http.Handler {
	ts := start(f, server.Config{MaxBodyBytes: 1 << 16}, &loader{cfg: engine.Config{MaxModelLen: 64, NumBlocks: 64}})
	return ts.Handler()
}

var sseFraming = regexp.MustCompile(`^(data: \{[^\n]*\}\n\n)+data: \[DONE\]\n\n$`)

// fuzzBody posts body to path and checks the answer: never a 500 (no
// input is the server's fault), a JSON error envelope for every refusal,
// well-formed JSON or SSE for every success.
func fuzzBody(t *testing.T, h http.Handler, path, body string) {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := rec.Body.Bytes()
	switch {
	case rec.Code >= 500:
		t.Fatalf("status %d for %q: %s", rec.Code, body, out)
	case rec.Code != 200:
		var env struct {
			Error *struct{ Message, Type string } `json:"error"`
		}
		if json.Unmarshal(out, &env) != nil || env.Error == nil || env.Error.Message == "" {
			t.Fatalf("status %d without an error envelope for %q: %s", rec.Code, body, out)
		}
	case strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
		if !sseFraming.Match(out) {
			t.Fatalf("bad SSE for %q: %s", body, out)
		}
		if strings.Contains(string(out), `data: {"error"`) {
			t.Fatalf("stream failed for %q: %s", body, out)
		}
	default:
		if !json.Valid(out) {
			t.Fatalf("invalid JSON for %q: %s", body, out)
		}
	}
}

func FuzzCompletions(f *testing.F) {
	for _, s := range []string{
		`{"model":"tiny","prompt":"hello","max_tokens":4}`,
		`{"model":"tiny","prompt":["a","b"],"n":2,"max_tokens":3,"logprobs":2,"seed":1,"temperature":0.7}`,
		`{"model":"tiny","prompt":[1,2,3],"stream":true,"stream_options":{"include_usage":true},"max_tokens":3}`,
		`{"model":"tiny","prompt":[[1,2],[3]],"stop":["a","b"],"top_k":5,"top_p":0.9,"min_p":0.1}`,
		`{"model":"tiny","prompt":"x","logit_bias":{"5":-100},"presence_penalty":1,"frequency_penalty":-1,"repetition_penalty":1.2}`,
		`{"model":"tiny","prompt":"x","max_tokens":1e3}`,
		`{"model":"tiny","prompt":null}`,
		`{"model":"tiny","prompt":"x","ignore_eos":true,"stop_token_ids":[2]}`,
		`{"model":1}`, `[]`, `"`, `{"model":"tiny","prompt":"\u0000\ud800"}`,
	} {
		f.Add(s)
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body string) { fuzzBody(t, h, "/v1/completions", body) })
}

func FuzzChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`,
		`{"model":"tiny","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true,"max_tokens":3}`,
		`{"model":"tiny","messages":[{"role":"assistant","content":null}],"logprobs":true,"top_logprobs":3,"max_completion_tokens":2}`,
		`{"model":"tiny","messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"enable_thinking":false},"add_generation_prompt":false}`,
		`{"model":"tiny","messages":[{"role":"tool","content":"x"}],"response_format":{"type":"text"},"tools":[]}`,
		`{"model":"tiny","messages":{}}`,
	} {
		f.Add(s)
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body string) { fuzzBody(t, h, "/v1/chat/completions", body) })
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		`{"model":"tiny","prompt":"hello","return_token_strs":true}`,
		`{"model":"tiny","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"tiny","prompt":"x","add_special_tokens":false}`,
	} {
		f.Add(s)
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzBody(t, h, "/tokenize", body)
		fuzzBody(t, h, "/detokenize", body)
	})
}
