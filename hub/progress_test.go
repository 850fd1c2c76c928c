package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"kiln/hub/hubtest"
)

// fakeClock advances only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestMeterLine(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m := newMeter(nil, false, "m.gguf", 1_000_000_000, 100_000_000, clk.now)
	if got, want := m.line(clk.t), "m.gguf  100.0 MB / 1.00 GB   10%"; got != want {
		t.Errorf("at start: %q, want %q", got, want)
	}
	clk.t = clk.t.Add(10 * time.Second)
	m.done = 300_000_000 // 200 MB in 10 s since start: 20 MB/s; 700 MB left: 35 s
	if got, want := m.line(clk.t), "m.gguf  300.0 MB / 1.00 GB   30%  20.0 MB/s  ETA 35s"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	u := newMeter(nil, false, "x", -1, 0, clk.now)
	clk.t = clk.t.Add(2 * time.Second)
	u.done = 3_000
	if got, want := u.line(clk.t), "x  3.0 kB  1.5 kB/s"; got != want {
		t.Errorf("unknown total: %q, want %q", got, want)
	}
}

func TestMeterOutput(t *testing.T) {
	for _, tt := range []struct {
		name string
		tty  bool
		want string
	}{
		// Plain: the first update, one 5 s later, the final line.
		{"plain", false, "f  0 B / 1.0 kB    0%\nf  600 B / 1.0 kB   60%  100 B/s  ETA 4s\nf  1.0 kB / 1.0 kB  100%  100 B/s\n"},
		// Terminal: every update 100 ms apart redraws the line in place.
		{"terminal", true, "\rf  0 B / 1.0 kB    0%\x1b[K\rf  100 B / 1.0 kB   10%  100 B/s  ETA 9s\x1b[K\rf  600 B / 1.0 kB   60%  100 B/s  ETA 4s\x1b[K\rf  1.0 kB / 1.0 kB  100%  100 B/s\x1b[K\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			clk := &fakeClock{t: time.Unix(0, 0)}
			m := newMeter(&b, tt.tty, "f", 1000, 0, clk.now)
			m.set(0)
			for _, step := range []struct {
				dt   time.Duration
				done int64
			}{{time.Second, 100}, {5 * time.Second, 600}, {4 * time.Second, 1000}} {
				clk.t = clk.t.Add(step.dt)
				m.set(step.done)
			}
			m.finish()
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 1_234_567: "1.2 MB", 4_920_000_000: "4.92 GB", 2_500_000_000_000: "2.50 TB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{7 * time.Second: "7s", 185 * time.Second: "3m05s", 3720 * time.Second: "1h02m", 0: "0s"} {
		if got := formatETA(d); got != want {
			t.Errorf("formatETA(%v) = %q, want %q", d, got, want)
		}
	}
}

// The progress display during a real download with one retry: the notice
// is on a line of its own, the last line shows the whole file.
func TestProgressDuringDownload(t *testing.T) {
	for _, tty := range []bool{false, true} {
		s := hubtest.New()
		standardRepo(s)
		s.SetFaults(hubtest.Faults{DropAfter: 100_000, DropCount: 1})
		var out strings.Builder
		c := testClient(t, s, func(o *Options) { o.Progress, o.Terminal = &out, tty })
		if _, err := c.Resolve(context.Background(), "hf:"+repoID+"/tiny-Q4_K_M.gguf"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		got := out.String()
		lines := strings.Split(got, "\n")
		retry := -1
		for i, l := range lines {
			if strings.Contains(l, "retrying in") {
				retry = i
				if !strings.HasPrefix(l, "hub: downloading hf:"+repoID+"/tiny-Q4_K_M.gguf: ") {
					t.Errorf("tty %v: retry notice shares its line: %q", tty, l)
				}
			}
		}
		last := lines[len(lines)-2]
		if i := strings.LastIndexByte(last, '\r'); i >= 0 {
			last = last[i+1:]
		}
		if retry < 0 || !strings.HasPrefix(last, "tiny-Q4_K_M.gguf  300.0 kB / 300.0 kB  100%") || !strings.HasSuffix(got, "\n") {
			t.Errorf("tty %v: output\n%q", tty, got)
		}
	}
}
