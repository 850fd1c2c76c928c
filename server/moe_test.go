package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"kiln/internal/testutil/tinymodel"
	"kiln/server"
)

// moePath writes (once per test binary) a small random-weight qwen3moe
// model, 8 experts and 2 per token, with a synthetic tokenizer.
var moePath = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kiln-server-moe")
	if err != nil {
		return "", err
	}
	spec := tinymodel.Spec
	spec.Arch, spec.HeadDim, spec.Ctx = "qwen3moe", 16, 4096
	spec.Experts, spec.ExpertsUsed, spec.ExpertFFN = 8, 2, 32
	path := filepath.Join(dir, "moe.gguf")
	return path, tinymodel.Write(path, spec, "Q8_0", 7)
})

// TestServeMoE: kiln serve with a mixture-of-experts model (issue 22:
// everything above the model keeps working): greedy completions give the
// same text alone and among concurrent requests (their rows grouped by
// expert in the same steps), guided outputs match what they allow, and the
// metrics count the model's tokens.
func TestServeMoE(t *testing.T) {
	path, err := moePath()
	if err != nil {
		t.Fatal(err)
	}
	ts := start(t, server.Config{Models: []server.Source{{Name: "moe", Path: path}}}, nil)
	complete := func(body string) (string, string) {
		t.Helper()
		status, _, b := ts.post(t, "/v1/completions", body)
		if status != 200 {
			t.Errorf("%s: %d %s", body, status, b)
			return "", ""
		}
		var r struct {
			Choices []struct {
				Text         string `json:"text"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		json.Unmarshal(b, &r)
		return r.Choices[0].Text, r.Choices[0].FinishReason
	}
	greedy := func(i int) string {
		return fmt.Sprintf(`{"model":"moe","prompt":"request number %d asks","max_tokens":%d,"temperature":0,"ignore_eos":true}`, i, 12+i)
	}
	alone := make([]string, 8)
	for i := range alone {
		alone[i], _ = complete(greedy(i))
	}
	together := make([]string, len(alone))
	var wg sync.WaitGroup
	for i := range together {
		wg.Add(1)
		go func() {
			defer wg.Done()
			together[i], _ = complete(greedy(i))
		}()
	}
	wg.Wait()
	for i := range alone {
		if alone[i] == "" || alone[i] != together[i] {
			t.Errorf("request %d: alone %q, among 8 %q", i, alone[i], together[i])
		}
	}

	for seed := range 3 {
		text, reason := complete(fmt.Sprintf(`{"model":"moe","prompt":"date","temperature":1,"seed":%d,"guided_regex":"20[0-9]{2}-(0[1-9]|1[0-2])-[0-2][0-9]"}`, seed))
		if !regexp.MustCompile(`^20[0-9]{2}-(0[1-9]|1[0-2])-[0-2][0-9]$`).MatchString(text) || reason != "stop" {
			t.Errorf("guided_regex: %q (%s)", text, reason)
		}
		text, reason = complete(fmt.Sprintf(`{"model":"moe","prompt":"pick","temperature":1,"seed":%d,"guided_choice":["red","green","blue"]}`, seed))
		if (text != "red" && text != "green" && text != "blue") || reason != "stop" {
			t.Errorf("guided_choice: %q (%s)", text, reason)
		}
	}

	// Every response has been read, so the engine has counted its tokens.
	want := float64(2 * (8*12 + 28)) // the greedy ones
	if n := value(t, ts.scrape(t), "vllm:generation_tokens_total", "model_name", "moe"); n < want {
		t.Errorf("vllm:generation_tokens_total %v, want at least the %v greedy tokens", n, want)
	}
}
