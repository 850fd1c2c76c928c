package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// TestServeEchoScoresLikeProbs is lm-evaluation-harness's multiple choice
// through kiln serve: one request of context+choice prompts with echo,
// logprobs and max_tokens 0, each choice's log-likelihood the sum of its
// tokens' token_logprobs. Each must equal the sum of the log of what
// `kiln probs` prints for those positions, and vLLM's prompt_logprobs the
// same numbers.
func TestServeEchoScoresLikeProbs(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	addr, err, log := serveStart(t, "--model", "stories="+m, "--kv-cache-memory", "64MiB")
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, log.String())
	}
	tokens := func(text string) []int32 {
		out, stderr, code := kiln(t, "tokenize", m, text)
		if code != 0 {
			t.Fatalf("tokenize %q: %s", text, stderr)
		}
		var got struct{ Tokens []int32 }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		return got.Tokens
	}
	ctx := append([]int32{1}, tokens("Once upon a time, there was a little")...) // BOS first
	var prompts [][]int32
	for _, choice := range []string{"girl", "dog named Max", "boy", "cat", "tree"} {
		prompts = append(prompts, append(append([]int32(nil), ctx...), tokens(choice)...))
	}
	body, _ := json.Marshal(map[string]any{"model": "stories", "prompt": prompts, "echo": true, "logprobs": 2,
		"max_tokens": 0, "prompt_logprobs": 1, "temperature": 0})
	resp, err := http.Post("http://"+addr+"/v1/completions", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Index    int
			Text     string
			Logprobs struct {
				Tokens        []string             `json:"tokens"`
				TokenLogprobs []*float64           `json:"token_logprobs"`
				TopLogprobs   []map[string]float64 `json:"top_logprobs"`
				TextOffset    []int                `json:"text_offset"`
			}
			PromptLogprobs []map[string]struct {
				Logprob float64
				Rank    int
			} `json:"prompt_logprobs"`
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if len(out.Choices) != len(prompts) || out.Usage.CompletionTokens != 0 {
		t.Fatalf("%d choices, %d completion tokens; want %d, 0", len(out.Choices), out.Usage.CompletionTokens, len(prompts))
	}
	for i, p := range prompts {
		c := out.Choices[i]
		lp := c.Logprobs
		if len(lp.Tokens) != len(p) || len(lp.TokenLogprobs) != len(p) || len(lp.TopLogprobs) != len(p) || len(lp.TextOffset) != len(p) || len(c.PromptLogprobs) != len(p) {
			t.Fatalf("choice %d: logprobs for %d tokens, prompt_logprobs %d; want %d (the prompt only)", i, len(lp.Tokens), len(c.PromptLogprobs), len(p))
		}
		if lp.TokenLogprobs[0] != nil || lp.TopLogprobs[0] != nil || c.PromptLogprobs[0] != nil {
			t.Errorf("choice %d: the first token is scored: %v %v %v", i, lp.TokenLogprobs[0], lp.TopLogprobs[0], c.PromptLogprobs[0])
		}
		if !strings.HasPrefix(c.Text, "Once upon a time, there was a little") || c.FinishReason != "length" {
			t.Errorf("choice %d: text %q, finish %q", i, c.Text, c.FinishReason)
		}
		// kiln probs over the same ids: every position's whole distribution.
		ids := make([]string, len(p))
		for k, id := range p {
			ids[k] = fmt.Sprint(id)
		}
		pout, stderr, code := kiln(t, "probs", m, "ids:"+strings.Join(ids, ","), "--all-positions", "--top", "512")
		if code != 0 {
			t.Fatalf("probs: %s", stderr)
		}
		var probs probsOutput
		if err := json.Unmarshal([]byte(pout), &probs); err != nil {
			t.Fatal(err)
		}
		var want, got, gotVLLM float64
		for pos := len(ctx); pos < len(p); pos++ {
			var prob float64
			for _, e := range probs.Positions[pos-1].Top {
				if int32(e[0]) == p[pos] {
					prob = e[1]
				}
			}
			want += math.Log(prob)
			got += *lp.TokenLogprobs[pos]
			gotVLLM += c.PromptLogprobs[pos][fmt.Sprint(p[pos])].Logprob
		}
		t.Logf("choice %d: log-likelihood %.6f (kiln probs %.6f)", i, got, want)
		if want == 0 || math.Abs(got-want) > 1e-4 || math.Abs(gotVLLM-want) > 1e-4 {
			t.Errorf("choice %d: log-likelihood %.6f from echo, %.6f from prompt_logprobs; kiln probs says %.6f", i, got, gotVLLM, want)
		}
	}
}
