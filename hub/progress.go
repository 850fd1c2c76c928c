package hub

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// meter draws a download's progress: bytes, percent, rate and ETA.
//
//	Qwen3-0.6B-Q8_0.gguf  312.4 MB / 639.4 MB  48%  41.2 MB/s  ETA 8s
//
// On a terminal one line is redrawn in place ("\r" + line + erase to end
// of line), at most 10 times a second; otherwise a plain line is printed at
// most every 5 seconds. finish always prints the last state and a newline.
// Sizes are SI (1 MB = 10^6 bytes), as the hub shows them. The rate counts
// only bytes received since the meter started (not a resumed prefix).
type meter struct {
	w     io.Writer
	tty   bool
	name  string
	now   func() time.Time
	total int64 // bytes; -1 unknown

	start    time.Time
	base     int64 // bytes already on disk at start
	done     int64 // bytes on disk now
	lastDraw time.Time
	lastLine string // as last drawn, so finish on a terminal need not repeat it
	drawn    bool
}

func newMeter(w io.Writer, tty bool, name string, total, done int64, now func() time.Time) *meter {
	m := &meter{w: w, tty: tty, name: name, now: now, total: total, base: done, done: done}
	m.start = now()
	return m
}

// set records that done bytes are on disk and redraws when due.
func (m *meter) set(done int64) {
	if m == nil || m.w == nil {
		return
	}
	m.done = done
	if done < m.base { // restarted from zero
		m.base, m.start = done, m.now()
	}
	t := m.now()
	every := 5 * time.Second
	if m.tty {
		every = 100 * time.Millisecond
	}
	if m.drawn && t.Sub(m.lastDraw) < every {
		return
	}
	m.draw(t, false)
}

// breakLine ends a half-drawn terminal line so that a message can follow
// on its own line; the next update draws afresh below it.
func (m *meter) breakLine() {
	if m == nil || m.w == nil || !m.tty || !m.drawn {
		return
	}
	fmt.Fprintln(m.w)
	m.drawn, m.lastLine = false, ""
}

// finish prints the final state and ends the line.
func (m *meter) finish() {
	if m == nil || m.w == nil {
		return
	}
	m.draw(m.now(), true)
}

func (m *meter) draw(t time.Time, final bool) {
	line := m.line(t)
	repeat := m.drawn && line == m.lastLine
	m.lastDraw, m.lastLine, m.drawn = t, line, true
	switch {
	case final && repeat && m.tty:
		fmt.Fprintln(m.w)
	case final && repeat:
		// the plain line is already there
	case m.tty && final:
		fmt.Fprintf(m.w, "\r%s\x1b[K\n", line)
	case m.tty:
		fmt.Fprintf(m.w, "\r%s\x1b[K", line)
	default:
		fmt.Fprintln(m.w, line)
	}
}

// line formats the current state at time t.
func (m *meter) line(t time.Time) string {
	var b strings.Builder
	b.WriteString(m.name)
	b.WriteString("  ")
	b.WriteString(FormatBytes(m.done))
	if m.total >= 0 {
		b.WriteString(" / " + FormatBytes(m.total))
		pct := 100.0
		if m.total > 0 {
			pct = 100 * float64(m.done) / float64(m.total)
		}
		fmt.Fprintf(&b, "  %3.0f%%", pct)
	}
	elapsed := t.Sub(m.start).Seconds()
	got := m.done - m.base
	if elapsed >= 0.2 && got > 0 {
		rate := float64(got) / elapsed // bytes/s
		b.WriteString("  " + FormatBytes(int64(rate)) + "/s")
		if m.total >= 0 && m.done < m.total {
			eta := time.Duration(float64(m.total-m.done) / rate * float64(time.Second))
			b.WriteString("  ETA " + formatETA(eta))
		}
	}
	return b.String()
}

// FormatBytes formats a byte count in SI units, as the hub shows sizes: 999 B, 1.0 kB, 12.3 MB, 4.56 GB (three significant digits
// from 1 GB up).
func FormatBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n < 1000_000_000_000:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.2f TB", float64(n)/1e12)
}

// formatETA: 7s, 3m05s, 1h02m.
func formatETA(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

// Meter is kiln pull's progress display for any long write whose size is
// known (kiln quantize, convert and synth writing a model): on a terminal
// one line redrawn in place at most 10 times a second; elsewhere only the
// line Finish prints, so that logs and tests see one deterministic-shaped
// line rather than a stream of redraws.
type Meter struct {
	m   *meter
	tty bool
}

// NewMeter starts a display of name on w: total bytes to write (-1 if
// unknown), tty whether w is a terminal.
func NewMeter(w io.Writer, tty bool, name string, total int64) *Meter {
	return &Meter{m: newMeter(w, tty, name, total, 0, time.Now), tty: tty}
}

// Set records that done bytes are written, redrawing on a terminal.
func (m *Meter) Set(done int64) {
	if m.tty {
		m.m.set(done)
	} else {
		m.m.done = done
	}
}

// Finish prints the final state and ends the line.
func (m *Meter) Finish() { m.m.finish() }
