package benchserve

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// MarshalJSON writes the result as one JSON object with vLLM's field
// names, in vLLM's order: settings, totals, the latency summaries
// (mean_ttft_ms, median_ttft_ms, std_ttft_ms, p99_ttft_ms, then tpot, itl
// and e2el), then the per-request arrays. kiln's additions: base_url,
// endpoint, dataset, temperature, output_tokens_source.
func (r *Result) MarshalJSON() ([]byte, error) {
	var o object
	o.add("date", r.Date)
	o.add("backend", r.Backend)
	o.add("endpoint_type", r.Backend) // vLLM writes both, for older readers
	o.add("model_id", r.Model)
	o.add("tokenizer_id", nullIfEmpty(r.Tokenizer))
	o.add("num_prompts", r.NumPrompts)
	o.add("request_rate", rateValue(r.RequestRate))
	o.add("burstiness", 1.0)
	if r.MaxConcurrency > 0 {
		o.add("max_concurrency", r.MaxConcurrency)
	} else {
		o.add("max_concurrency", nil)
	}
	o.add("base_url", r.BaseURL)
	o.add("endpoint", r.Endpoint)
	o.add("dataset", r.Dataset)
	o.add("temperature", r.Temperature)
	o.add("duration", r.Duration)
	o.add("completed", r.Completed)
	o.add("failed", r.Failed)
	o.add("total_input_tokens", r.TotalInput)
	o.add("total_output_tokens", r.TotalOutput)
	o.add("request_throughput", r.RequestThroughput)
	o.add("output_throughput", r.OutputThroughput)
	o.add("total_token_throughput", r.TotalTokenThroughput)
	o.add("max_output_tokens_per_s", r.MaxOutputTokensPerS)
	o.add("max_concurrent_requests", r.MaxConcurrentRequests)
	o.add("output_tokens_source", nullIfEmpty(r.OutputTokensSource))
	for _, m := range []struct {
		name string
		m    *Metric
	}{{"ttft", &r.TTFT}, {"tpot", &r.TPOT}, {"itl", &r.ITL}, {"e2el", &r.E2EL}} {
		o.add("mean_"+m.name+"_ms", m.m.Mean)
		o.add("median_"+m.name+"_ms", m.m.Median)
		o.add("std_"+m.name+"_ms", m.m.Std)
		for i, p := range r.Percentiles {
			if i < len(m.m.P) {
				o.add("p"+PercentileName(p)+"_"+m.name+"_ms", m.m.P[i])
			}
		}
	}
	o.add("input_lens", r.InputLens)
	o.add("output_lens", r.OutputLens)
	o.add("ttfts", r.TTFTs)
	o.add("itls", r.ITLs)
	o.add("latencies", r.Latencies)
	o.add("start_times", r.StartTimes)
	o.add("errors", r.Errors)
	return o.bytes()
}

// PercentileName writes p as vLLM names it in a key: "99", "99.9".
func PercentileName(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64)
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// object builds a JSON object with keys in insertion order.
type object struct {
	buf bytes.Buffer
	err error
}

func (o *object) add(key string, v any) {
	if o.err != nil {
		return
	}
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	o.buf.Write(k)
	o.buf.WriteByte(':')
	b, err := json.Marshal(v)
	if err != nil {
		o.err = err
		return
	}
	o.buf.Write(b)
}

func (o *object) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.buf.Len() == 0 {
		return []byte("{}"), nil
	}
	o.buf.WriteByte('}')
	return o.buf.Bytes(), nil
}
