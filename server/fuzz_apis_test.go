package server_test

import (
	"bufio"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// checkEvents checks the answer of an API whose streams are named
// Server-Sent Events (Responses, Messages) or JSON (Embeddings): never a
// 500, an error envelope with a message for every refusal (OpenAI's and
// Anthropic's both hold error.message), and for a success either valid
// JSON or a stream whose every data line is JSON.
func checkEvents(t *testing.T, code int, contentType string, out []byte, body string) {
	switch {
	case code >= 500:
		t.Fatalf("status %d for %q: %s", code, body, out)
	case code != 200:
		var env struct {
			Error *struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(out, &env) != nil || env.Error == nil || env.Error.Message == "" {
			t.Fatalf("status %d without an error envelope for %q: %s", code, body, out)
		}
	case strings.HasPrefix(contentType, "text/event-stream"):
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "[DONE]" && !json.Valid([]byte(d)) {
				t.Fatalf("a data line that is not JSON for %q: %s", body, d)
			}
		}
	default:
		if !json.Valid(out) {
			t.Fatalf("invalid JSON for %q: %s", body, out)
		}
	}
}

func fuzzAPI(f *testing.F, path string, seeds []string) {
	for _, s := range seeds {
		f.Add(s)
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkEvents(t, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes(), body)
	})
}

func FuzzResponses(f *testing.F) {
	fuzzAPI(f, "/v1/responses", []string{
		`{"model":"tiny","input":"hi","max_output_tokens":4}`,
		`{"model":"tiny","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]}],"instructions":"s","stream":true,"max_output_tokens":3}`,
		`{"model":"tiny","input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}],"tool_choice":"required","max_output_tokens":20}`,
		`{"model":"tiny","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"1"}],"max_output_tokens":2}`,
		`{"model":"tiny","input":"x","text":{"format":{"type":"json_schema","name":"s","schema":{"type":"object"}}},"max_output_tokens":8,"stream":true}`,
		`{"model":"tiny","input":"x","previous_response_id":"resp_1"}`, `{"input":1}`, `[]`,
	})
}

func FuzzMessages(f *testing.F) {
	fuzzAPI(f, "/v1/messages", []string{
		`{"model":"tiny","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"tiny","max_tokens":4,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true,"stop_sequences":["x"]}`,
		`{"model":"tiny","max_tokens":30,"messages":[{"role":"user","content":"w"}],"tools":[{"name":"w","input_schema":{"type":"object","properties":{"c":{"type":"string"}}}}],"tool_choice":{"type":"any"}}`,
		`{"model":"tiny","max_tokens":4,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"w","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok","is_error":true}]}]}`,
		`{"model":"tiny","messages":[]}`, `{"max_tokens":-1}`, `null`,
	})
}

func FuzzEmbeddings(f *testing.F) {
	fuzzAPI(f, "/v1/embeddings", []string{
		`{"model":"tiny","input":"hello"}`,
		`{"model":"tiny","input":["a","b"],"encoding_format":"base64"}`,
		`{"model":"tiny","input":[[1,2,3],[4]],"dimensions":64}`,
		`{"model":"tiny","input":[1,2,3]}`, `{"model":"tiny","input":[]}`, `{"model":"tiny","input":""}`, `{}`,
	})
}
