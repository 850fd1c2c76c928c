package memstat

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseBytes reads a memory size as flags give it: a number with an
// optional unit, B, KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB
// (powers of 1024), case-insensitive: "2GiB", "512MiB", "1.5GB", "4096".
// The result is in bytes, at least 0 and below math.MaxInt64.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || v < 0 || math.IsInf(v*mult, 0) || v*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("memstat: bad memory size %q (want a number and a unit such as 2GiB or 512MB)", s)
	}
	return int64(v * mult), nil
}
