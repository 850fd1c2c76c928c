package benchserve

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Colours of the chart series (colour-blind-safe pairs of blue and orange).
const (
	blue   = "#1f77b4"
	orange = "#e66101"
	green  = "#2ca02c"
)

// SweepChart draws a concurrency sweep as an SVG: three panels against the
// runs' max concurrency (in the order given, evenly spaced) — TTFT median
// and last percentile, TPOT median and last percentile (ms), and output
// throughput (tok/s).
func SweepChart(rs []*Result) []byte {
	title := "Serving benchmark sweep"
	if len(rs) > 0 && rs[0].Model != "" {
		title += ": " + rs[0].Model
	}
	c := newCanvas(1200, 400, title)
	labels := make([]string, len(rs))
	xs := make([]float64, len(rs))
	pname := "p99"
	if len(rs) > 0 && len(rs[0].Percentiles) > 0 {
		pname = "p" + PercentileName(rs[0].Percentiles[len(rs[0].Percentiles)-1])
	}
	for i, r := range rs {
		xs[i] = float64(i)
		labels[i] = "none"
		if r.MaxConcurrency > 0 {
			labels[i] = strconv.Itoa(r.MaxConcurrency)
		}
	}
	col := func(f func(*Result) float64) []float64 {
		ys := make([]float64, len(rs))
		for i, r := range rs {
			ys[i] = f(r)
		}
		return ys
	}
	latency := func(x float64, name string, m func(*Result) *Metric) {
		p := c.panel(x, 40, 400, 360)
		med := col(func(r *Result) float64 { return m(r).Median })
		hi := col(func(r *Result) float64 { return last(m(r).P) })
		p.yAxis(maxOf(slices.Concat(med, hi)), name+" (ms)")
		p.xAxisCategories(labels, "max concurrency")
		p.frame(name)
		p.series(xs, med, blue, "", name+" p50")
		p.series(xs, hi, orange, "6,4", name+" "+pname)
	}
	latency(0, "TTFT", func(r *Result) *Metric { return &r.TTFT })
	latency(400, "TPOT", func(r *Result) *Metric { return &r.TPOT })
	p := c.panel(800, 40, 400, 360)
	tput := col(func(r *Result) float64 { return r.OutputThroughput })
	p.yAxis(maxOf(tput), "output tokens/s")
	p.xAxisCategories(labels, "max concurrency")
	p.frame("Output throughput")
	p.series(xs, tput, green, "", "output tok/s")
	return c.bytes()
}

// RunChart draws one run as an SVG: the distribution of inter-token
// latencies (a histogram up to the 99.9th percentile, with the median and
// 99th percentile marked) and each completed request's TTFT and
// end-to-end latency against the time it was sent.
func RunChart(r *Result) []byte {
	title := "Serving benchmark"
	if r.Model != "" {
		title += ": " + r.Model
	}
	c := newCanvas(1000, 420, title)

	// Inter-token latency histogram.
	var itl []float64
	for _, gaps := range r.ITLs {
		for _, g := range gaps {
			itl = append(itl, g*1000)
		}
	}
	p := c.panel(0, 40, 500, 380)
	if len(itl) == 0 {
		p.yAxis(1, "gaps")
		p.xAxisNumeric(0, 1, "inter-token latency (ms)")
		p.frame("Inter-token latency")
		c.text(p.left+p.pw/2, p.top+p.ph/2, "no inter-token gaps (one chunk per request)", "middle", 12, "normal")
	} else {
		s := NewStats(itl)
		lo, hi := s.Percentile(0), s.Percentile(99.9)
		if hi <= lo {
			hi = lo + math.Max(lo*0.1, 0.1)
		}
		const bins = 40
		counts := make([]float64, bins)
		width := (hi - lo) / bins
		for _, v := range itl {
			if v > hi { // beyond p99.9: left out of the picture
				continue
			}
			counts[min(int((v-lo)/width), bins-1)]++
		}
		p.xAxisNumeric(lo, hi, "inter-token latency (ms)")
		p.yAxis(maxOf(counts), "gaps")
		p.frame(fmt.Sprintf("Inter-token latency (%d gaps)", len(itl)))
		for i, n := range counts {
			if n == 0 {
				continue
			}
			x0, x1 := p.px(lo+float64(i)*width), p.px(lo+float64(i+1)*width)
			fmt.Fprintf(&c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.75"/>`+"\n",
				x0, p.py(n), math.Max(x1-x0-1, 1), p.py(0)-p.py(n), blue)
		}
		for _, m := range []struct {
			v     float64
			color string
			name  string
		}{{s.Median, green, "p50 " + tickLabel(round2(s.Median)) + " ms"}, {s.Percentile(99), orange, "p99 " + tickLabel(round2(s.Percentile(99))) + " ms"}} {
			x := p.px(math.Min(m.v, p.xmax))
			c.line(x, p.top, x, p.top+p.ph, m.color, 2, "6,4")
			p.key(m.color, "6,4", m.name, false)
		}
	}

	// Per-request latencies against send time.
	q := c.panel(500, 40, 500, 380)
	var st, ttft, e2el []float64
	for i := range r.Errors {
		if r.Errors[i] != "" {
			continue
		}
		st = append(st, r.StartTimes[i])
		ttft = append(ttft, r.TTFTs[i]*1000)
		e2el = append(e2el, r.Latencies[i]*1000)
	}
	q.xAxisNumeric(0, math.Max(maxOf(st), 1e-3), "request sent at (s since start)")
	q.yAxis(maxOf(slices.Concat(ttft, e2el)), "latency (ms)")
	q.frame(fmt.Sprintf("Per-request latency (%d completed, %d failed)", r.Completed, r.Failed))
	q.dots(st, e2el, orange, 3)
	q.key(orange, "", "end-to-end", true)
	q.dots(st, ttft, blue, 3)
	q.key(blue, "", "TTFT", true)
	return c.bytes()
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		if x > m && !math.IsInf(x, 0) {
			m = x
		}
	}
	return m
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
