package main

import (
	"path/filepath"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// TestWriteProgress: quantize, convert and synth say on stderr what they
// wrote, as kiln pull does: redrawn on a terminal, and off one (here) a
// single final line at 100%.
func TestWriteProgress(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		args []string
		line string
	}{
		{[]string{"quantize", testutil.SharedModel(t, "stories260K.gguf"), filepath.Join(tmp, "q.gguf"), "F16"}, "writing q.gguf"},
		{[]string{"convert", testutil.SharedModel(t, "tinystories-656k"), filepath.Join(tmp, "c.gguf")}, "writing c.gguf"},
		{[]string{"synth", filepath.Join(tmp, "s.gguf"), "--arch", "llama", "--dim", "64", "--layers", "1", "--heads", "2", "--ffn", "128", "--vocab-size", "300"}, "writing s.gguf"},
	} {
		_, stderr, code := kiln(t, tc.args...)
		if code != 0 || strings.Count(stderr, tc.line) != 1 || !strings.Contains(stderr, "100%\n") || strings.Contains(stderr, "\r") {
			t.Errorf("kiln %v: exit %d, stderr %q; want one line %q ... 100%%", tc.args, code, stderr, tc.line)
		}
	}
}
