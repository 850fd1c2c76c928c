package main

import (
	"io"
	"path/filepath"

	"kiln/hub"
)

// writeProgress shows a long write (quantize, convert, synth) on stderr
// the way kiln pull shows a download (hub.Meter): bytes, percent, rate
// and ETA redrawn in place on a terminal; elsewhere one final line. feed
// is the Progress callback of convert.Options or synth.Model; done ends
// the line (call it once the write succeeded).
func writeProgress(stderr io.Writer, out string) (feed func(written, total int64), done func()) {
	var m *hub.Meter
	feed = func(written, total int64) {
		if m == nil {
			m = hub.NewMeter(stderr, isTerminal(stderr), "writing "+filepath.Base(out), total)
		}
		m.Set(min(written, total)) // the header is not in total
	}
	done = func() {
		if m != nil {
			m.Finish()
		}
	}
	return feed, done
}
