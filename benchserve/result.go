package benchserve

import (
	"math"
	"slices"
	"time"
)

// Metric is one latency's summary over a run, in milliseconds.
type Metric struct {
	Mean, Median, Std float64
	// P holds the percentiles of Result.Percentiles, in that order.
	P []float64
}

// Result is one run's report. Its JSON (MarshalJSON) uses the field names
// of vLLM's "vllm bench serve" result file, so tools that read those read
// these; kiln's additions are marked below.
type Result struct {
	// The run's settings.
	Date           string  // "20060102-150405", local time
	Backend        string  // "openai" (completions) or "openai-chat", vLLM's names
	Model          string  // model_id
	Tokenizer      string  // tokenizer_id: the --tokenizer GGUF, or "" (null)
	NumPrompts     int     // requests in the run
	RequestRate    float64 // requests/s; +Inf is written "inf", as vLLM does
	MaxConcurrency int     // 0 (null): no cap
	// kiln: where the traffic went and what it was.
	BaseURL     string
	Endpoint    string
	Dataset     string
	Temperature float64

	// Totals. Duration is in seconds; throughputs per second of it.
	Duration             float64
	Completed, Failed    int
	TotalInput           int // prompt tokens of the completed requests
	TotalOutput          int // output tokens of the completed requests
	RequestThroughput    float64
	OutputThroughput     float64
	TotalTokenThroughput float64
	// MaxOutputTokensPerS is the most content chunks received in one
	// whole second of the run (vLLM's "peak output token throughput");
	// MaxConcurrentRequests the most requests in flight at once.
	MaxOutputTokensPerS   float64
	MaxConcurrentRequests int
	// kiln: where output token counts came from: "usage" (every completed
	// request's final usage chunk), "chunks" (counted content chunks, the
	// server sent no usage) or "mixed".
	OutputTokensSource string

	// Latencies in ms over the completed requests. TTFT: send to first
	// content chunk. TPOT: (E2EL-TTFT)/(output tokens-1), requests with
	// more than one output token. ITL: every gap between content chunks
	// of every request. E2EL: send to the end of the stream.
	TTFT, TPOT, ITL, E2EL Metric
	Percentiles           []float64 // which percentiles the Metrics hold, e.g. [99]

	// Per request, in request order (failed ones too, with zeros):
	// seconds for TTFTs, ITLs, Latencies and StartTimes (since the run's
	// start); Errors is "" for a completed request.
	InputLens  []int
	OutputLens []int
	TTFTs      []float64
	ITLs       [][]float64
	Latencies  []float64
	StartTimes []float64
	Errors     []string
}

// Summarize turns a measurement into a Result's measured fields (the
// settings are the caller's to fill). pcts are the percentiles to report.
func Summarize(m Measurement, pcts []float64) Result {
	n := len(m.Outputs)
	r := Result{
		NumPrompts:  n,
		Duration:    m.Duration.Seconds(),
		Percentiles: pcts,
		InputLens:   make([]int, n),
		OutputLens:  make([]int, n),
		TTFTs:       make([]float64, n),
		ITLs:        make([][]float64, n),
		Latencies:   make([]float64, n),
		StartTimes:  make([]float64, n),
		Errors:      make([]string, n),
	}
	var ttft, tpot, itl, e2el []float64
	usage := 0
	for i := range m.Outputs {
		o := &m.Outputs[i]
		r.InputLens[i] = o.PromptLen
		r.ITLs[i] = []float64{}
		if !o.Start.IsZero() {
			r.StartTimes[i] = o.Start.Sub(m.Start).Seconds()
		}
		if !o.Success {
			r.Failed++
			r.Errors[i] = o.Error
			continue
		}
		r.Completed++
		if o.UsageReported {
			usage++
		}
		r.TotalInput += o.PromptLen
		r.TotalOutput += o.OutputTokens
		r.OutputLens[i] = o.OutputTokens
		r.TTFTs[i] = o.TTFT.Seconds()
		r.Latencies[i] = o.Latency.Seconds()
		for _, g := range o.ITL {
			r.ITLs[i] = append(r.ITLs[i], g.Seconds())
			itl = append(itl, ms(g))
		}
		ttft = append(ttft, ms(o.TTFT))
		e2el = append(e2el, ms(o.Latency))
		if t, ok := o.TPOT(); ok {
			tpot = append(tpot, ms(t))
		}
	}
	switch {
	case r.Completed == 0:
		r.OutputTokensSource = ""
	case usage == r.Completed:
		r.OutputTokensSource = "usage"
	case usage == 0:
		r.OutputTokensSource = "chunks"
	default:
		r.OutputTokensSource = "mixed"
	}
	if d := r.Duration; d > 0 {
		r.RequestThroughput = float64(r.Completed) / d
		r.OutputThroughput = float64(r.TotalOutput) / d
		r.TotalTokenThroughput = float64(r.TotalInput+r.TotalOutput) / d
	}
	r.TTFT = metric(ttft, pcts)
	r.TPOT = metric(tpot, pcts)
	r.ITL = metric(itl, pcts)
	r.E2EL = metric(e2el, pcts)
	r.MaxOutputTokensPerS, r.MaxConcurrentRequests = peaks(m.Outputs)
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func metric(xs, pcts []float64) Metric {
	s := NewStats(xs)
	m := Metric{Mean: s.Mean, Median: s.Median, Std: s.Std, P: make([]float64, len(pcts))}
	for i, p := range pcts {
		m.P[i] = s.Percentile(p)
	}
	return m
}

// peaks returns the most content chunks that arrived within one whole
// second (seconds counted from the earliest completed request's start)
// and the most completed requests in flight at once, each request in
// flight over [Start, Start+Latency). Failed requests count in neither, as
// in vLLM.
func peaks(outs []Output) (float64, int) {
	var t0 time.Time
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for i := range outs {
		o := &outs[i]
		if !o.Success {
			continue
		}
		if t0.IsZero() || o.Start.Before(t0) {
			t0 = o.Start
		}
		edges = append(edges, edge{o.Start, +1}, edge{o.Start.Add(o.Latency), -1})
	}
	if len(edges) == 0 {
		return 0, 0
	}
	perSecond := map[int64]int{}
	for i := range outs {
		o := &outs[i]
		if !o.Success {
			continue
		}
		t := o.Start.Add(o.TTFT)
		perSecond[int64(t.Sub(t0)/time.Second)]++
		for _, g := range o.ITL {
			t = t.Add(g)
			perSecond[int64(t.Sub(t0)/time.Second)]++
		}
	}
	most := 0
	for _, c := range perSecond {
		most = max(most, c)
	}
	// Departures before arrivals at the same instant: half-open intervals.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return float64(most), peak
}

// rateValue is the JSON value of a request rate: a number, or "inf".
func rateValue(r float64) any {
	if math.IsInf(r, 1) {
		return "inf"
	}
	return r
}
