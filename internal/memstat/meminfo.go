package memstat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ParseMemAvailable reads MemAvailable, in bytes, from a /proc/meminfo
// text ("MemAvailable:    8000000 kB"; other lines are ignored).
func ParseMemAvailable(meminfo io.Reader) (int64, error) {
	sc := bufio.NewScanner(meminfo)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || (len(f) > 2 && f[2] != "kB") {
				return 0, fmt.Errorf("memstat: bad meminfo line %q", sc.Text())
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("memstat: reading meminfo: %w", err)
	}
	return 0, fmt.Errorf("memstat: meminfo has no MemAvailable line")
}

// Available reads the system's MemAvailable from /proc/meminfo, in bytes;
// an error (not Linux, no /proc) means it is unknown.
func Available() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("memstat: %w", err)
	}
	defer f.Close()
	return ParseMemAvailable(f)
}
