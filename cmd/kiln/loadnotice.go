package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"kiln/hub"
)

// loadNotice tells a person at a terminal that a model is loading, which
// for a large one (repacking, or quantizing a folder with --type) takes
// long enough to look like a hang: "loading NAME (SIZE)..." on stderr,
// replaced once the load ends (call the returned func) by nothing, so the
// output is what it was. Off a terminal it prints nothing: logs and
// pipes keep their exact output.
func loadNotice(stderr io.Writer, path string) (end func()) {
	return loadNoticeTo(stderr, isTerminal(stderr), path, time.Now)
}

func loadNoticeTo(w io.Writer, tty bool, path string, now func() time.Time) func() {
	if !tty {
		return func() {}
	}
	start := now()
	fmt.Fprintf(w, "loading %s (%s)...", filepath.Base(filepath.Clean(path)), hub.FormatBytes(modelBytes(path)))
	return func() {
		if d := now().Sub(start); d >= 2*time.Second { // worth a line of its own
			fmt.Fprintf(w, "\r\x1b[Kloaded %s in %.1fs\n", filepath.Base(filepath.Clean(path)), d.Seconds())
			return
		}
		fmt.Fprint(w, "\r\x1b[K") // erase it: a quick load leaves no trace
	}
}
