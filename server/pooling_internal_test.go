package server

import (
	"math"
	"testing"
)

// TestPool checks each pooling on two rows of three, with and without L2
// normalisation, and the GGUF enum's mapping.
func TestPool(t *testing.T) {
	rows := []float32{3, 0, 4, 1, 2, 2} // [2][3]
	cases := []struct {
		pooling   string
		normalize bool
		want      []float32
	}{
		{PoolLast, false, []float32{1, 2, 2}},
		{PoolLast, true, []float32{1. / 3, 2. / 3, 2. / 3}},
		{PoolCLS, true, []float32{0.6, 0, 0.8}},
		{PoolMean, false, []float32{2, 1, 3}},
		{PoolMean, true, []float32{2 / float32(math.Sqrt(14)), 1 / float32(math.Sqrt(14)), 3 / float32(math.Sqrt(14))}},
	}
	for _, c := range cases {
		got, err := pool(c.pooling, rows, 3, c.normalize)
		if err != nil {
			t.Fatal(err)
		}
		for j := range got {
			if math.Abs(float64(got[j]-c.want[j])) > 1e-6 {
				t.Errorf("%s normalize=%v: %v, want %v", c.pooling, c.normalize, got, c.want)
				break
			}
		}
	}
	if _, err := pool(PoolMean, rows[:5], 3, true); err == nil {
		t.Error("5 values pooled as rows of 3")
	}
	if v, _ := pool(PoolLast, []float32{0, 0}, 2, true); v[0] != 0 || v[1] != 0 {
		t.Errorf("a zero vector normalised to %v", v)
	}
	if poolRows(PoolLast, 9) != 1 || poolRows(PoolMean, 9) != 9 {
		t.Error("poolRows")
	}
	for typ, want := range map[int]string{0: "", 1: PoolMean, 2: PoolCLS, 3: PoolLast, 4: ""} {
		if got := PoolingFromGGUF(typ); got != want {
			t.Errorf("pooling_type %d: %q, want %q", typ, got, want)
		}
	}
}
