package kvcache

import "testing"

func TestBlocksForBudget(t *testing.T) {
	for _, c := range []struct {
		budget int64
		per    int
		want   int
	}{{2 << 30, 1 << 20, 2048}, {100, 33, 3}, {10, 0, 0}, {-5, 4, 0}, {1 << 62, 1, 1<<31 - 1}} {
		if got := BlocksForBudget(c.budget, c.per); got != c.want {
			t.Errorf("BlocksForBudget(%d, %d) = %d, want %d", c.budget, c.per, got, c.want)
		}
	}
}
