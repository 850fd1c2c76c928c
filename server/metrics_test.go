package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"kiln/engine"
	"kiln/server"
)

// TestMetrics scrapes /metrics during and after load and checks vLLM's
// names, types and labels, and the values against what the requests
// themselves reported (usage) and the engine's state.
func TestMetrics(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	if err := ts.Preload(context.Background()); err != nil {
		t.Fatal(err)
	}
	prefix := strings.Repeat("shared prefix words ", 6)
	var mu sync.Mutex
	var prompt, completion, cached, requests int
	var wg sync.WaitGroup
	scraped := make(chan map[string]*dto.MetricFamily, 1)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"model":"tiny","prompt":%q,"max_tokens":%d,"ignore_eos":true}`, prefix+fmt.Sprint(i), 20+i)
			status, _, b := ts.post(t, "/v1/completions", body)
			if status != 200 {
				t.Errorf("%d %s", status, b)
				return
			}
			var r struct {
				Usage struct {
					PromptTokens        int `json:"prompt_tokens"`
					CompletionTokens    int `json:"completion_tokens"`
					PromptTokensDetails struct {
						CachedTokens int `json:"cached_tokens"`
					} `json:"prompt_tokens_details"`
				} `json:"usage"`
			}
			json.Unmarshal(b, &r)
			mu.Lock()
			prompt += r.Usage.PromptTokens
			completion += r.Usage.CompletionTokens
			cached += r.Usage.PromptTokensDetails.CachedTokens
			requests++
			mu.Unlock()
		}()
		if i == 6 {
			select {
			case scraped <- ts.scrape(t): // during the load: it parses, values in range
			default:
			}
		}
	}
	wg.Wait()
	during := <-scraped
	if u := value(t, during, "vllm:kv_cache_usage_perc", "model_name", "tiny"); u < 0 || u > 1 {
		t.Errorf("KV usage %v outside [0, 1]", u)
	}
	fams := ts.idle(t)

	types := map[string]dto.MetricType{
		"vllm:num_requests_running":        dto.MetricType_GAUGE,
		"vllm:num_requests_waiting":        dto.MetricType_GAUGE,
		"vllm:kv_cache_usage_perc":         dto.MetricType_GAUGE,
		"vllm:cache_config_info":           dto.MetricType_GAUGE,
		"vllm:prefix_cache_queries_total":  dto.MetricType_COUNTER,
		"vllm:prefix_cache_hits_total":     dto.MetricType_COUNTER,
		"vllm:num_preemptions_total":       dto.MetricType_COUNTER,
		"vllm:prompt_tokens_total":         dto.MetricType_COUNTER,
		"vllm:generation_tokens_total":     dto.MetricType_COUNTER,
		"vllm:request_success_total":       dto.MetricType_COUNTER,
		"vllm:time_to_first_token_seconds": dto.MetricType_HISTOGRAM,
		"vllm:inter_token_latency_seconds": dto.MetricType_HISTOGRAM,
		"vllm:e2e_request_latency_seconds": dto.MetricType_HISTOGRAM,
		"vllm:request_queue_time_seconds":  dto.MetricType_HISTOGRAM,
	}
	for name, typ := range types {
		f := fams[name]
		if f == nil {
			t.Errorf("missing %s", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
		for _, m := range f.Metric {
			if !hasLabel(m, "model_name", "tiny") {
				t.Errorf("%s sample without model_name=\"tiny\": %v", name, m.Label)
			}
		}
	}
	check := func(name string, got, want float64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("prompt_tokens_total", value(t, fams, "vllm:prompt_tokens_total", "model_name", "tiny"), float64(prompt))
	check("generation_tokens_total", value(t, fams, "vllm:generation_tokens_total", "model_name", "tiny"), float64(completion))
	check("request_success_total{length}", value(t, fams, "vllm:request_success_total", "model_name", "tiny", "finished_reason", "length"), float64(requests))
	check("e2e count", value(t, fams, "vllm:e2e_request_latency_seconds", "model_name", "tiny"), float64(requests))
	check("ttft count", value(t, fams, "vllm:time_to_first_token_seconds", "model_name", "tiny"), float64(requests))
	check("itl count", value(t, fams, "vllm:inter_token_latency_seconds", "model_name", "tiny"), float64(completion-requests))
	check("prefix_cache_hits_total", value(t, fams, "vllm:prefix_cache_hits_total", "model_name", "tiny"), float64(cached))
	check("prefix_cache_queries_total", value(t, fams, "vllm:prefix_cache_queries_total", "model_name", "tiny"), float64(prompt))
	check("cache_config_info", value(t, fams, "vllm:cache_config_info", "model_name", "tiny", "block_size", "16", "num_gpu_blocks", "512", "cache_dtype", "f16"), 1)
	if cached == 0 {
		t.Errorf("12 requests sharing a %d-character prefix hit no cache", len(prefix))
	}
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.Label {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestSSEFraming checks a stream byte for byte against OpenAI's framing:
// "data: " + one line of JSON + a blank line per chunk, then
// "data: [DONE]" and a blank line, and nothing else.
func TestSSEFraming(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		body := `{"model":"tiny","max_tokens":7,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true},`
		if path == "/v1/completions" {
			body += `"prompt":"hello"}`
		} else {
			body += `"messages":[{"role":"user","content":"hello"}]}`
		}
		status, h, b := ts.post(t, path, body)
		if status != 200 || h.Get("Content-Type") != "text/event-stream; charset=utf-8" {
			t.Fatalf("%s: %d %q", path, status, h.Get("Content-Type"))
		}
		framing := regexp.MustCompile(`^(data: \{[^\n]*\}\n\n)+data: \[DONE\]\n\n$`)
		if !framing.Match(b) {
			t.Fatalf("%s: framing:\n%s", path, b)
		}
		chunks := strings.Split(strings.TrimSuffix(string(b), "data: [DONE]\n\n"), "\n\n")
		chunks = chunks[:len(chunks)-1]
		var last map[string]any
		for _, c := range chunks {
			last = nil
			if err := json.Unmarshal([]byte(strings.TrimPrefix(c, "data: ")), &last); err != nil {
				t.Fatalf("%s: chunk %q: %v", path, c, err)
			}
			want := "text_completion"
			if path != "/v1/completions" {
				want = "chat.completion.chunk"
			}
			if last["object"] != want {
				t.Errorf("%s: object %v", path, last["object"])
			}
		}
		if u, ok := last["usage"].(map[string]any); !ok || u["completion_tokens"] != 7.0 || len(last["choices"].([]any)) != 0 {
			t.Errorf("%s: last chunk %v: want the usage chunk with no choices", path, last)
		}
	}
}

// TestTokenize: /tokenize and /detokenize round-trip, and a chat's
// /tokenize gives the prompt the chat endpoint runs (its usage).
func TestTokenize(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	status, _, b := ts.post(t, "/tokenize", `{"model":"tiny","prompt":"hello world","return_token_strs":true}`)
	var tr struct {
		Count       int      `json:"count"`
		MaxModelLen int      `json:"max_model_len"`
		Tokens      []int32  `json:"tokens"`
		TokenStrs   []string `json:"token_strs"`
	}
	if status != 200 || json.Unmarshal(b, &tr) != nil || tr.Count != len(tr.Tokens) || tr.Count == 0 || tr.MaxModelLen != 4096 || len(tr.TokenStrs) != tr.Count {
		t.Fatalf("tokenize: %d %s", status, b)
	}
	ids, _ := json.Marshal(tr.Tokens)
	status, _, b = ts.post(t, "/detokenize", `{"model":"tiny","tokens":`+string(ids)+`}`)
	var dr struct{ Prompt string }
	if status != 200 || json.Unmarshal(b, &dr) != nil || !strings.HasSuffix(dr.Prompt, "hello world") {
		t.Fatalf("detokenize: %d %s", status, b)
	}
	msgs := `"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi there"}]`
	_, _, b = ts.post(t, "/tokenize", `{"model":"tiny",`+msgs+`}`)
	json.Unmarshal(b, &tr)
	_, _, b = ts.post(t, "/v1/chat/completions", `{"model":"tiny","max_tokens":1,`+msgs+`}`)
	var cr struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	json.Unmarshal(b, &cr)
	if cr.Usage.PromptTokens != tr.Count {
		t.Errorf("chat prompt %d tokens, /tokenize says %d", cr.Usage.PromptTokens, tr.Count)
	}
}

// TestSpecMetrics: with n-gram speculation on, vLLM's spec_decode
// counters report the engine's drafts and acceptances, and a greedy
// completion is the same with and without speculation.
func TestSpecMetrics(t *testing.T) {
	body := `{"model":"tiny","prompt":"` + strings.Repeat("a b c d ", 12) + `","max_tokens":48,"temperature":0,"ignore_eos":true}`
	plain := start(t, server.Config{}, nil)
	_, _, want := plain.post(t, "/v1/completions", body)
	ts := start(t, server.Config{}, &loader{cfg: engine.Config{Spec: engine.Speculation{Method: "ngram", Tokens: 4}}})
	status, _, got := ts.post(t, "/v1/completions", body)
	if status != 200 {
		t.Fatalf("%d %s", status, got)
	}
	text := func(b []byte) string {
		var r struct {
			Choices []struct{ Text string } `json:"choices"`
		}
		json.Unmarshal(b, &r)
		return r.Choices[0].Text
	}
	if text(got) != text(want) {
		t.Errorf("greedy with speculation %q, without %q", text(got), text(want))
	}
	fams := ts.scrape(t)
	drafts := value(t, fams, "vllm:spec_decode_num_drafts_total", "model_name", "tiny")
	draftTok := value(t, fams, "vllm:spec_decode_num_draft_tokens_total", "model_name", "tiny")
	accepted := value(t, fams, "vllm:spec_decode_num_accepted_tokens_total", "model_name", "tiny")
	if drafts == 0 || draftTok < drafts || accepted > draftTok {
		t.Errorf("drafts %v, draft tokens %v, accepted %v", drafts, draftTok, accepted)
	}
	if f := fams["vllm:spec_decode_num_accepted_tokens_per_pos_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("no per-position acceptance counter")
	}
}
