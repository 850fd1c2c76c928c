package benchserve

import (
	"math"
	"testing"
)

// TestStatsMatchNumpy: values numpy gives for the same samples
// (np.mean, np.std, np.median, np.percentile with linear interpolation).
func TestStatsMatchNumpy(t *testing.T) {
	s := NewStats([]float64{10, 1, 3, 2, 4})
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"mean", s.Mean, 4},
		{"std", s.Std, math.Sqrt(10)},
		{"median", s.Median, 3},
		{"p99", s.Percentile(99), 9.76}, // rank 3.96: 4 + 0.96*(10-4)
		{"p25", s.Percentile(25), 2},
		{"p0", s.Percentile(0), 1},
		{"p100", s.Percentile(100), 10},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if m := NewStats([]float64{1, 2, 3, 4}).Median; m != 2.5 {
		t.Errorf("even median = %v, want 2.5", m)
	}
	if e := NewStats(nil); e.Mean != 0 || e.Percentile(99) != 0 || e.Std != 0 {
		t.Errorf("empty stats %+v", e)
	}
}
