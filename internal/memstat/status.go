package memstat

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Status is a process's memory, in bytes.
type Status struct {
	RSS int64 // VmRSS: resident now (anonymous, file-backed such as mapped weights, and shared)
	HWM int64 // VmHWM: the peak of RSS so far
}

// Parse reads VmRSS and VmHWM from a /proc/PID/status text ("VmRSS:
// 123456 kB" lines; other lines are ignored). Both must be present.
func Parse(r io.Reader) (Status, error) {
	var st Status
	var seen [2]bool
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		key, rest, ok := strings.Cut(line, ":")
		var dst *int64
		switch key {
		case "VmRSS":
			dst, seen[0] = &st.RSS, true
		case "VmHWM":
			dst, seen[1] = &st.HWM, true
		}
		if !ok || dst == nil {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return Status{}, fmt.Errorf("memstat: bad status line %q", line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > math.MaxInt64>>10 {
			return Status{}, fmt.Errorf("memstat: bad status line %q", line)
		}
		*dst = kb << 10
	}
	if err := sc.Err(); err != nil {
		return Status{}, fmt.Errorf("memstat: reading status: %w", err)
	}
	if !seen[0] || !seen[1] {
		return Status{}, fmt.Errorf("memstat: status has no VmRSS or no VmHWM line")
	}
	return st, nil
}

// Self reads this process's status; an error (not Linux, no /proc) means
// the figures are unavailable.
func Self() (Status, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return Status{}, fmt.Errorf("memstat: %w", err)
	}
	defer f.Close()
	return Parse(f)
}
