package server

import (
	"cmp"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are vLLM's Prometheus metrics, by vLLM's names, types, buckets
// and model_name label, so its dashboards and the Gateway API Inference
// Extension's endpoint picker read kiln unchanged. Counters carry the
// _total suffix in their names, as vLLM's Python client exposes them.
//
// Gauges and the engine's own counters (prefix cache, preemptions) are
// read from each loaded model's engine at scrape time (engineCollector);
// request-level figures are counted by the server as requests end, so
// they survive a model's unloading.
type metrics struct {
	reg *prometheus.Registry

	promptTokens     *prometheus.CounterVec
	generationTokens *prometheus.CounterVec
	requestSuccess   *prometheus.CounterVec
	ttft, itl        *prometheus.HistogramVec
	e2e, queueTime   *prometheus.HistogramVec
	rejected         prometheus.Counter
}

// vLLM's buckets (vllm/v1/metrics/loggers.py).
var (
	ttftBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	latencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

func newMetrics(reg *registry, grammars *grammarCache) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	byModel := []string{"model_name"}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, byModel)
	}
	m.promptTokens = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", byModel...)
	m.generationTokens = counter("vllm:generation_tokens_total", "Number of generation tokens processed.", byModel...)
	m.requestSuccess = counter("vllm:request_success_total", "Count of successfully processed requests.", "model_name", "finished_reason")
	m.ttft = histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets)
	m.itl = histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itlBuckets)
	m.e2e = histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", latencyBuckets)
	m.queueTime = histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", latencyBuckets)
	m.rejected = prometheus.NewCounter(prometheus.CounterOpts{Name: "kiln:requests_rejected_total",
		Help: "Requests refused with 429 because the waiting queue was full (--max-queue)."})
	grammarBytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kiln:grammar_cache_bytes",
		Help: "Estimated bytes of the compiled structured-output grammars cached (--grammar-cache-memory bounds it)."},
		func() float64 { b, _ := grammars.stats(); return float64(b) })
	grammarEntries := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kiln:grammar_cache_entries",
		Help: "Structured-output grammars cached, compiled or refused."},
		func() float64 { _, n := grammars.stats(); return float64(n) })
	m.reg.MustRegister(grammarBytes, grammarEntries)
	m.reg.MustRegister(m.promptTokens, m.generationTokens, m.requestSuccess, m.ttft, m.itl, m.e2e, m.queueTime, m.rejected,
		&engineCollector{reg: reg},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// engineCollector reads each loaded model's engine snapshot at scrape time.
type engineCollector struct{ reg *registry }

var (
	descRunning = prometheus.NewDesc("vllm:num_requests_running", "Number of requests in model execution batches.", []string{"model_name"}, nil)
	descWaiting = prometheus.NewDesc("vllm:num_requests_waiting", "Number of requests waiting to be processed.", []string{"model_name"}, nil)
	descKVUsage = prometheus.NewDesc("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", []string{"model_name"}, nil)
	descCache   = prometheus.NewDesc("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
		[]string{"model_name", "block_size", "num_gpu_blocks", "cache_dtype", "enable_prefix_caching"}, nil)
	descQueries = prometheus.NewDesc("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", []string{"model_name"}, nil)
	descHits    = prometheus.NewDesc("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", []string{"model_name"}, nil)
	descPreempt = prometheus.NewDesc("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", []string{"model_name"}, nil)
	// Speculative decoding (vLLM's spec_decode family).
	descDrafts   = prometheus.NewDesc("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", []string{"model_name"}, nil)
	descDraftTok = prometheus.NewDesc("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", []string{"model_name"}, nil)
	descAccepted = prometheus.NewDesc("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", []string{"model_name"}, nil)
	descAcceptAt = prometheus.NewDesc("vllm:spec_decode_num_accepted_tokens_per_pos_total", "Accepted tokens per draft position.", []string{"model_name", "position"}, nil)
)

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRunning, descWaiting, descKVUsage, descCache, descQueries, descHits, descPreempt,
		descDrafts, descDraftTok, descAccepted, descAcceptAt} {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.reg.loaded() {
		st := s.m.Engine.Stats()
		name := s.name
		ch <- prometheus.MustNewConstMetric(descRunning, prometheus.GaugeValue, float64(st.Running), name)
		ch <- prometheus.MustNewConstMetric(descWaiting, prometheus.GaugeValue, float64(st.Waiting), name)
		ch <- prometheus.MustNewConstMetric(descKVUsage, prometheus.GaugeValue, st.KVUsage, name)
		ch <- prometheus.MustNewConstMetric(descCache, prometheus.GaugeValue, 1, name,
			strconv.Itoa(s.m.BlockSize), strconv.Itoa(s.m.NumBlocks), cmp.Or(s.m.CacheDtype, "auto"), map[bool]string{true: "True", false: "False"}[s.m.PrefixCache])
		ch <- prometheus.MustNewConstMetric(descQueries, prometheus.CounterValue, float64(st.KV.PrefixQueries), name)
		ch <- prometheus.MustNewConstMetric(descHits, prometheus.CounterValue, float64(st.KV.PrefixHits), name)
		ch <- prometheus.MustNewConstMetric(descPreempt, prometheus.CounterValue, float64(st.Preemptions), name)
		ch <- prometheus.MustNewConstMetric(descDrafts, prometheus.CounterValue, float64(st.SpecDrafts), name)
		ch <- prometheus.MustNewConstMetric(descDraftTok, prometheus.CounterValue, float64(st.SpecDraftTokens), name)
		ch <- prometheus.MustNewConstMetric(descAccepted, prometheus.CounterValue, float64(st.SpecAcceptedTokens), name)
		for pos, n := range st.SpecAcceptedAt {
			if n > 0 || pos < s.m.SpecTokens {
				ch <- prometheus.MustNewConstMetric(descAcceptAt, prometheus.CounterValue, float64(n), name, strconv.Itoa(pos))
			}
		}
	}
}
