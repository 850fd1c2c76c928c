package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"kiln/server"
)

// TestContinueFinalMessage: continue_final_message renders the final
// assistant message open (no end-of-turn, no new generation prompt), so
// the prompt is the conversation up to the assistant's turn plus its
// text; with add_generation_prompt true, or a final message not the
// assistant's, it is a 400 (vLLM's).
func TestContinueFinalMessage(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	post := func(path, body string, v any) int {
		t.Helper()
		status, _, b := ts.post(t, path, body)
		if status == 200 {
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatal(err)
			}
		}
		return status
	}
	detok := func(ids []int32) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"model": "tiny", "tokens": ids})
		var r struct{ Prompt string }
		if post("/detokenize", string(body), &r) != 200 {
			t.Fatal("detokenize")
		}
		return r.Prompt
	}
	const conv = `"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"The answer is"}]`
	var cont struct {
		TokenIDs []int32 `json:"token_ids"`
	}
	if s := post("/v1/chat/completions/render", `{"model":"tiny",`+conv+`,"continue_final_message":true}`, &cont); s != 200 {
		t.Fatalf("render: %d", s)
	}
	var head struct{ Tokens []int32 }
	if s := post("/tokenize", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"add_generation_prompt":true}`, &head); s != 200 {
		t.Fatalf("tokenize: %d", s)
	}
	got, want := detok(cont.TokenIDs), detok(head.Tokens)+"The answer is"
	if got != want {
		t.Errorf("continued prompt %q, want %q", got, want)
	}
	// /tokenize takes it too (vLLM's), with the same prompt.
	var tk struct{ Tokens []int32 }
	if s := post("/tokenize", `{"model":"tiny",`+conv+`,"continue_final_message":true}`, &tk); s != 200 || detok(tk.Tokens) != want {
		t.Errorf("tokenize: %d %q", s, detok(tk.Tokens))
	}
	var out struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if s := post("/v1/chat/completions", `{"model":"tiny",`+conv+`,"continue_final_message":true,"add_generation_prompt":false,"max_tokens":3}`, &out); s != 200 || len(out.Choices) != 1 {
		t.Errorf("chat: %d", s)
	}
	for _, body := range []string{
		`{"model":"tiny",` + conv + `,"continue_final_message":true,"add_generation_prompt":true}`,
		`{"model":"tiny","messages":[{"role":"user","content":"hi"}],"continue_final_message":true}`,
	} {
		status, _, b := ts.post(t, "/v1/chat/completions", body)
		if status != 400 || !strings.Contains(string(b), "continue_final_message") {
			t.Errorf("%s: %d %s, want a 400 naming continue_final_message", body, status, b)
		}
	}
}
