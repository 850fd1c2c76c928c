package kvcache

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ParseBytes reads a memory size as flags give it: a number with an
// optional unit, B, KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB
// (powers of 1024), case-insensitive: "2GiB", "512MiB", "1.5GB", "4096".
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
		return 0, fmt.Errorf("kvcache: bad memory size %q (want a number and a unit such as 2GiB or 512MB)", s)
	}
	return int64(v * mult), nil
}

// BlocksForBudget is how many blocks of bytesPerBlock fit in budget bytes.
func BlocksForBudget(budget int64, bytesPerBlock int) int {
	if bytesPerBlock <= 0 || budget <= 0 {
		return 0
	}
	return int(min(budget/int64(bytesPerBlock), math.MaxInt32))
}

// DefaultShare is the fraction of available memory the KV cache takes when
// no budget is given: the weights are memory-mapped and live in the page
// cache that MemAvailable counts as reclaimable, so taking it all would
// evict them.
const DefaultShare = 0.25

// DefaultBudget is the KV cache budget from the available memory in bytes.
func DefaultBudget(available int64) int64 { return int64(float64(available) * DefaultShare) }

// MemAvailable parses MemAvailable from /proc/meminfo's contents.
func MemAvailable(meminfo io.Reader) (int64, error) {
	sc := bufio.NewScanner(meminfo)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || (len(f) > 2 && f[2] != "kB") {
				return 0, fmt.Errorf("kvcache: bad meminfo line %q", sc.Text())
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("kvcache: reading meminfo: %w", err)
	}
	return 0, fmt.Errorf("kvcache: meminfo has no MemAvailable line")
}
