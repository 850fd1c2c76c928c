package benchserve

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteTable prints the result as vLLM's "Serving Benchmark Result" block:
// 50 columns, a label padded to 40 then the value, one section per latency.
func (r *Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	line := func(label string, v any) {
		switch v := v.(type) {
		case float64:
			fmt.Fprintf(&b, "%-40s %.2f\n", label, v)
		default:
			fmt.Fprintf(&b, "%-40s %v\n", label, v)
		}
	}
	b.WriteString(banner(" Serving Benchmark Result ", '=') + "\n")
	line("Successful requests:", r.Completed)
	line("Failed requests:", r.Failed)
	if r.MaxConcurrency > 0 {
		line("Maximum request concurrency:", r.MaxConcurrency)
	}
	if !math.IsInf(r.RequestRate, 1) {
		line("Request rate configured (RPS):", r.RequestRate)
	}
	line("Benchmark duration (s):", r.Duration)
	line("Total input tokens:", r.TotalInput)
	line("Total generated tokens:", r.TotalOutput)
	line("Request throughput (req/s):", r.RequestThroughput)
	line("Output token throughput (tok/s):", r.OutputThroughput)
	line("Peak output token throughput (tok/s):", r.MaxOutputTokensPerS)
	line("Peak concurrent requests:", float64(r.MaxConcurrentRequests))
	line("Total token throughput (tok/s):", r.TotalTokenThroughput)
	if r.OutputTokensSource != "" {
		line("Output tokens counted from:", r.OutputTokensSource)
	}
	for _, s := range []struct {
		header, name string
		m            *Metric
	}{
		{"Time to First Token", "TTFT", &r.TTFT},
		{"Time per Output Token (excl. 1st token)", "TPOT", &r.TPOT},
		{"Inter-token Latency", "ITL", &r.ITL},
		{"End-to-end Latency", "E2EL", &r.E2EL},
	} {
		b.WriteString(banner(s.header, '-') + "\n")
		line("Mean "+s.name+" (ms):", s.m.Mean)
		line("Median "+s.name+" (ms):", s.m.Median)
		for i, p := range r.Percentiles {
			if i < len(s.m.P) {
				line("P"+PercentileName(p)+" "+s.name+" (ms):", s.m.P[i])
			}
		}
	}
	b.WriteString(strings.Repeat("=", 50) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// banner centres s in 50 columns of fill, as Python's "{:=^50}" does
// (the extra fill of an odd split goes to the right).
func banner(s string, fill byte) string {
	pad := max(50-len(s), 0)
	left := pad / 2
	return strings.Repeat(string(fill), left) + s + strings.Repeat(string(fill), pad-left)
}

// WriteSweepTable prints one line per run of a sweep: concurrency, rate,
// throughputs and the TTFT and TPOT medians and last percentile.
func WriteSweepTable(w io.Writer, rs []*Result) error {
	var b strings.Builder
	pn := "p99"
	if len(rs) > 0 && len(rs[0].Percentiles) > 0 {
		pn = "p" + PercentileName(rs[0].Percentiles[len(rs[0].Percentiles)-1])
	}
	b.WriteString(banner(" Sweep Summary ", '=') + "\n")
	fmt.Fprintf(&b, "%11s %6s %4s %8s %9s %9s %9s %9s %9s\n", "concurrency", "rate", "fail", "req/s", "out tok/s",
		"TTFT p50", "TTFT "+pn, "TPOT p50", "TPOT "+pn)
	for _, r := range rs {
		c := "none"
		if r.MaxConcurrency > 0 {
			c = fmt.Sprint(r.MaxConcurrency)
		}
		rate := "inf"
		if !math.IsInf(r.RequestRate, 1) {
			rate = fmt.Sprintf("%.2f", r.RequestRate)
		}
		fmt.Fprintf(&b, "%11s %6s %4d %8.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", c, rate, r.Failed,
			r.RequestThroughput, r.OutputThroughput, r.TTFT.Median, last(r.TTFT.P), r.TPOT.Median, last(r.TPOT.P))
	}
	b.WriteString("(latencies in ms)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func last(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1]
}
