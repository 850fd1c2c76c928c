package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"kiln/server"
)

// TestCompletionsEcho: echo puts the prompt before each choice's text and,
// with logprobs, its tokens before the generated ones in the legacy lists
// (the first null), text offsets counting the echoed prompt; max_tokens 0
// returns the prompt scored and nothing generated. The numbers against
// `kiln probs` are cmd/kiln's TestServeEchoScoresLikeProbs.
func TestCompletionsEcho(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	type lps struct {
		Tokens        []string             `json:"tokens"`
		TokenLogprobs []*float32           `json:"token_logprobs"`
		TopLogprobs   []map[string]float32 `json:"top_logprobs"`
		TextOffset    []int                `json:"text_offset"`
	}
	var out struct {
		Choices []struct {
			Text           string
			Logprobs       *lps
			PromptLogprobs []map[string]any `json:"prompt_logprobs"`
		}
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	post := func(body string) {
		t.Helper()
		status, _, b := ts.post(t, "/v1/completions", body)
		if status != 200 {
			t.Fatalf("%s: %d %s", body, status, b)
		}
		out.Choices = nil
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
	}

	// lm-evaluation-harness's request: echo, logprobs, one generated token, n = 2.
	post(`{"model":"tiny","prompt":"hello world","echo":true,"logprobs":1,"max_tokens":1,"n":2,"ignore_eos":true}`)
	if len(out.Choices) != 2 {
		t.Fatalf("%d choices", len(out.Choices))
	}
	p := out.Usage.PromptTokens
	for i, c := range out.Choices {
		lp := c.Logprobs
		if !strings.HasPrefix(c.Text, "hello world") || len(c.Text) <= len("hello world") {
			t.Errorf("choice %d: text %q, want the prompt and one token", i, c.Text)
		}
		if lp == nil || len(lp.Tokens) != p+1 || len(lp.TokenLogprobs) != p+1 || len(lp.TextOffset) != p+1 {
			t.Fatalf("choice %d: logprobs %+v for a %d-token prompt and one token", i, lp, p)
		}
		if lp.TokenLogprobs[0] != nil || lp.TopLogprobs[0] != nil {
			t.Errorf("choice %d: the first token scored", i)
		}
		for k := 1; k <= p; k++ {
			if lp.TokenLogprobs[k] == nil || *lp.TokenLogprobs[k] > 0 || len(lp.TopLogprobs[k]) == 0 {
				t.Errorf("choice %d token %d: logprob %v, top %v", i, k, lp.TokenLogprobs[k], lp.TopLogprobs[k])
			}
		}
		if lp.TextOffset[p] != len("hello world") {
			t.Errorf("choice %d: the generated token's text_offset %d, want %d", i, lp.TextOffset[p], len("hello world"))
		}
		if c.PromptLogprobs != nil {
			t.Errorf("choice %d: prompt_logprobs not asked but sent", i)
		}
	}

	// max_tokens 0: the prompt only; echo without logprobs: text only.
	post(`{"model":"tiny","prompt":["hello world","x"],"echo":true,"max_tokens":0}`)
	if len(out.Choices) != 2 || out.Choices[0].Text != "hello world" || out.Choices[1].Text != "x" || out.Usage.CompletionTokens != 0 || out.Choices[0].Logprobs != nil {
		t.Errorf("max_tokens 0: %+v", out)
	}

	// prompt_logprobs alone (vLLM's): null, then a dict per prompt token.
	post(`{"model":"tiny","prompt":"hello world","prompt_logprobs":2,"max_tokens":0}`)
	c := out.Choices[0]
	if c.Text != "" || len(c.PromptLogprobs) != out.Usage.PromptTokens || c.PromptLogprobs[0] != nil || len(c.PromptLogprobs[1]) < 2 {
		t.Errorf("prompt_logprobs: %+v", out)
	}
}
