package benchserve

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// measurement builds a two-request measurement by hand: one completed with
// known times, one failed.
func measurement() Measurement {
	t0 := time.Unix(1000, 0)
	return Measurement{
		Start:    t0,
		Duration: 2 * time.Second,
		Outputs: []Output{
			{Success: true, Start: t0, TTFT: 100 * time.Millisecond, ITL: []time.Duration{20 * time.Millisecond, 40 * time.Millisecond},
				Latency: 160 * time.Millisecond, Chunks: 3, OutputTokens: 3, UsageReported: true, PromptLen: 8},
			{Error: "HTTP 500: boom", Start: t0.Add(500 * time.Millisecond), PromptLen: 8},
		},
	}
}

func TestSummarizeNumbers(t *testing.T) {
	r := Summarize(measurement(), []float64{50, 99.9})
	if r.Completed != 1 || r.Failed != 1 || r.TotalInput != 8 || r.TotalOutput != 3 || r.NumPrompts != 2 {
		t.Fatalf("totals %+v", r)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("request_throughput", r.RequestThroughput, 0.5)
	near("output_throughput", r.OutputThroughput, 1.5)
	near("total_token_throughput", r.TotalTokenThroughput, 5.5)
	near("mean_ttft_ms", r.TTFT.Mean, 100)
	near("mean_tpot_ms", r.TPOT.Mean, 30) // (160-100)/(3-1)
	near("mean_itl_ms", r.ITL.Mean, 30)
	near("std_itl_ms", r.ITL.Std, 10)
	near("p99.9_itl_ms", r.ITL.P[1], 20+0.999*20)
	near("mean_e2el_ms", r.E2EL.Mean, 160)
	near("start_times[1]", r.StartTimes[1], 0.5)
	near("max_output_tokens_per_s", r.MaxOutputTokensPerS, 3)
	if r.MaxConcurrentRequests != 1 || r.OutputTokensSource != "usage" {
		t.Errorf("peak %d source %q", r.MaxConcurrentRequests, r.OutputTokensSource)
	}
}

// TestResultJSONFieldNames: the file uses vLLM's names, so vLLM's readers
// (and people used to them) read it.
func TestResultJSONFieldNames(t *testing.T) {
	r := Summarize(measurement(), []float64{99})
	r.Date, r.Backend, r.Model, r.RequestRate, r.MaxConcurrency = "20250101-000000", "openai", "m", math.Inf(1), 4
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want := []string{"date", "backend", "endpoint_type", "model_id", "tokenizer_id", "num_prompts", "request_rate",
		"burstiness", "max_concurrency", "duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
		"request_throughput", "output_throughput", "total_token_throughput", "max_output_tokens_per_s",
		"max_concurrent_requests", "input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "errors",
		"base_url", "endpoint", "dataset", "temperature", "output_tokens_source"}
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, s := range []string{"mean", "median", "std", "p99"} {
			want = append(want, s+"_"+m+"_ms")
		}
	}
	for _, k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	for k := range got {
		if !slices.Contains(want, k) {
			t.Errorf("unexpected key %q", k)
		}
	}
	if got["request_rate"] != "inf" || got["max_concurrency"] != 4.0 || got["tokenizer_id"] != nil {
		t.Errorf("request_rate %v, max_concurrency %v, tokenizer_id %v", got["request_rate"], got["max_concurrency"], got["tokenizer_id"])
	}
	itls := got["itls"].([]any)
	if len(itls) != 2 || len(itls[0].([]any)) != 2 || len(itls[1].([]any)) != 0 {
		t.Errorf("itls %v: want a list per request, [] for the failed one", itls)
	}
	if e := got["errors"].([]any); e[0] != "" || e[1] != "HTTP 500: boom" {
		t.Errorf("errors %v", e)
	}
	// Keys come in vLLM's order: settings first, arrays last.
	if s := string(b); !strings.HasPrefix(s, `{"date":`) || !strings.HasSuffix(s, `"errors":["","HTTP 500: boom"]}`) {
		t.Errorf("order: %s", s)
	}
	r.RequestRate, r.MaxConcurrency = 2.5, 0
	b, _ = json.Marshal(&r)
	got = nil
	json.Unmarshal(b, &got)
	if got["request_rate"] != 2.5 || got["max_concurrency"] != nil {
		t.Errorf("finite rate %v, no cap %v", got["request_rate"], got["max_concurrency"])
	}
}

func TestTable(t *testing.T) {
	r := Summarize(measurement(), []float64{99})
	r.RequestRate, r.MaxConcurrency = math.Inf(1), 4
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"============ Serving Benchmark Result ============\n",
		"Successful requests:                     1\n",
		"Failed requests:                         1\n",
		"Maximum request concurrency:             4\n",
		"Benchmark duration (s):                  2.00\n",
		"Total generated tokens:                  3\n",
		"Output token throughput (tok/s):         1.50\n",
		"---------------Time to First Token----------------\n",
		"Mean TTFT (ms):                          100.00\n",
		"-----Time per Output Token (excl. 1st token)------\n",
		"P99 TPOT (ms):                           30.00\n",
		"---------------Inter-token Latency----------------\n",
		"----------------End-to-end Latency----------------\n",
		"\n==================================================\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Request rate configured") {
		t.Errorf("an infinite rate is not printed:\n%s", out)
	}
	var sw strings.Builder
	WriteSweepTable(&sw, []*Result{&r, &r})
	if strings.Count(sw.String(), "\n") != 5 || !strings.Contains(sw.String(), "TTFT p99") {
		t.Errorf("sweep table:\n%s", sw.String())
	}
}
