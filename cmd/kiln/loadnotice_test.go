package main

import (
	"bytes"
	"testing"
	"time"

	"kiln/internal/testutil"
)

// TestLoadNotice: on a terminal a load says it started and, when it took
// a while, how long; a quick one is erased; off a terminal nothing.
func TestLoadNotice(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	at := time.Unix(0, 0)
	now := func() time.Time { return at }
	var b bytes.Buffer
	end := loadNoticeTo(&b, true, m, now)
	at = at.Add(3 * time.Second)
	end()
	if got, want := b.String(), "loading stories260K.gguf (1.2 MB)...\r\x1b[Kloaded stories260K.gguf in 3.0s\n"; got != want {
		t.Errorf("slow load: %q, want %q", got, want)
	}
	b.Reset()
	loadNoticeTo(&b, true, m, now)()
	if got, want := b.String(), "loading stories260K.gguf (1.2 MB)...\r\x1b[K"; got != want {
		t.Errorf("quick load: %q, want %q", got, want)
	}
	b.Reset()
	loadNoticeTo(&b, false, m, now)()
	if b.Len() != 0 {
		t.Errorf("off a terminal: %q, want nothing", b.String())
	}
}
