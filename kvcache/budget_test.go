package kvcache

import (
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	good := map[string]int64{"2GiB": 2 << 30, "512MiB": 512 << 20, "1.5GB": 1.5e9, "4096": 4096, " 3 kib ": 3072, "7B": 7, "1TiB": 1 << 40}
	for s, want := range good {
		if got, err := ParseBytes(s); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "GiB", "2XB", "-1GiB", "1e400", "9999999TiB", "1.2.3MB"} {
		if _, err := ParseBytes(s); err == nil {
			t.Errorf("ParseBytes(%q): no error", s)
		}
	}
}

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

func TestMemAvailable(t *testing.T) {
	got, err := MemAvailable(strings.NewReader("MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n"))
	if err != nil || got != 8000000<<10 {
		t.Fatalf("MemAvailable = %d, %v", got, err)
	}
	if _, err := MemAvailable(strings.NewReader("MemTotal: 1 kB\n")); err == nil {
		t.Fatal("no MemAvailable line: no error")
	}
	if DefaultBudget(8<<30) != 2<<30 {
		t.Fatalf("DefaultBudget(8GiB) = %d", DefaultBudget(8<<30))
	}
}
