package memstat

import (
	"runtime"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	st, err := Parse(strings.NewReader("Name:\tkiln\nVmPeak:\t  999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t3\n"))
	if err != nil || st != (Status{RSS: 1 << 20, HWM: 2 << 20}) {
		t.Fatalf("got %+v, %v", st, err)
	}
	for _, bad := range []string{
		"",
		"VmRSS:\t1 kB\n",                    // no VmHWM
		"VmRSS:\t1 MB\nVmHWM:\t1 kB\n",      // unit
		"VmRSS:\tx kB\nVmHWM:\t1 kB\n",      // number
		"VmRSS:\t-1 kB\nVmHWM:\t1 kB\n",     // sign
		"VmRSS:\t1 kB 2\nVmHWM:\t1 kB\n",    // fields
		"VmRSS:\t99999999999999999999 kB\n", // overflow
	} {
		if st, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", bad, st)
		}
	}
}

// TestSelf: on Linux this process has a resident set, at most its peak.
func TestSelf(t *testing.T) {
	st, err := Self()
	if runtime.GOOS != "linux" {
		if err == nil {
			t.Logf("not Linux, yet /proc/self/status reads: %+v", st)
		}
		return
	}
	if err != nil || st.RSS <= 0 || st.HWM < st.RSS {
		t.Fatalf("Self() = %+v, %v", st, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("VmHWM:\t2048 kB\nVmRSS:\t1024 kB\n")
	f.Add("VmRSS: 1 kB\nVmHWM:\n")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := Parse(strings.NewReader(s))
		if err == nil && (st.RSS < 0 || st.HWM < 0 || st.RSS%1024 != 0 || st.HWM%1024 != 0) {
			t.Fatalf("Parse(%q) = %+v", s, st)
		}
	})
}
