package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestModelPathNotAFile: a folder without config.json is named as such by
// every command that opens a MODEL, and a FIFO is refused at once instead
// of blocking in open(2) until a writer comes.
func TestModelPathNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.gguf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, args := range [][]string{
		{"generate", dir, "hi"},
		{"probs", dir, "hi"},
		{"tokenize", dir, "hi"},
		{"run", dir, "hi"},
	} {
		if _, stderr, code := kiln(t, args...); code != 1 || !strings.Contains(stderr, "folder without config.json") {
			t.Errorf("kiln %v: exit %d, stderr %q; want exit 1 naming a folder without config.json", args, code, stderr)
		}
	}
	for _, args := range [][]string{{"generate", fifo, "hi"}, {"inspect", fifo}, {"tokenize", fifo, "hi"}} {
		done := make(chan string, 1)
		go func() {
			_, stderr, code := kiln(t, args...)
			if code != 1 || !strings.Contains(stderr, "not a regular file") {
				stderr = fmt.Sprintf("exit %d: %s", code, stderr)
			} else {
				stderr = ""
			}
			done <- stderr
		}()
		select {
		case msg := <-done:
			if msg != "" {
				t.Errorf("kiln %v: %s; want exit 1 saying not a regular file", args, msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("kiln %v blocks on the FIFO", args) // the goroutine stays blocked: end the test binary here
		}
	}
}
