package benchserve

import (
	"math"
	"slices"
)

// Stats summarizes a sample the way vLLM's benchmark does with numpy: the
// mean, the population standard deviation (ddof 0), the median and
// percentiles by linear interpolation between closest ranks (numpy's
// default). An empty sample gives zeros everywhere, as np.mean([0]) does
// in vLLM.
type Stats struct {
	Mean, Median, Std float64
	sorted            []float64
}

// NewStats summarizes xs (which it does not modify).
func NewStats(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := Stats{sorted: slices.Clone(xs)}
	slices.Sort(s.sorted)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	s.Mean = sum / float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - s.Mean) * (x - s.Mean)
	}
	s.Std = math.Sqrt(v / float64(len(xs)))
	s.Median = s.Percentile(50)
	return s
}

// Percentile returns the p-th percentile (0 <= p <= 100): the value at
// rank p/100*(n-1), interpolated linearly between its neighbours.
func (s Stats) Percentile(p float64) float64 {
	n := len(s.sorted)
	if n == 0 {
		return 0
	}
	pos := p / 100 * float64(n-1)
	lo := int(math.Floor(pos))
	if lo < 0 {
		return s.sorted[0]
	}
	if lo >= n-1 {
		return s.sorted[n-1]
	}
	frac := pos - float64(lo)
	return s.sorted[lo] + frac*(s.sorted[lo+1]-s.sorted[lo])
}
