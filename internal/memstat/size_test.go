package memstat

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

func TestParseMemAvailable(t *testing.T) {
	got, err := ParseMemAvailable(strings.NewReader("MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n"))
	if err != nil || got != 8000000<<10 {
		t.Fatalf("ParseMemAvailable = %d, %v", got, err)
	}
	for _, bad := range []string{"MemTotal: 1 kB\n", "MemAvailable: x kB\n", "MemAvailable: 1 MB\n"} {
		if _, err := ParseMemAvailable(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseMemAvailable(%q): no error", bad)
		}
	}
}
