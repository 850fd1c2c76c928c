package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSynthInspectRopeScaling: kiln synth --rope-scaling writes YaRN (or
// linear) scaling as a GGUF and as an HF folder; kiln inspect shows it;
// bad flag values are usage errors.
func TestSynthInspectRopeScaling(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ flag, want string }{
		{"yarn:4:32768", "rope scaling:  yarn, factor 4, original context 32768 (YaRN attention factor 1)"},
		{"linear:2", "rope scaling:  linear, factor 2"},
	} {
		args := []string{"--arch", "qwen2", "--dim", "64", "--layers", "1", "--heads", "4", "--ffn", "64", "--vocab-size", "300",
			"--ctx", "131072", "--rope-scaling", tc.flag}
		name := strings.ReplaceAll(tc.flag, ":", "-")
		g, h := filepath.Join(dir, name+".gguf"), filepath.Join(dir, name+"-hf")
		for _, a := range [][]string{append([]string{"synth", g}, args...), append([]string{"synth", "--format", "hf", h}, args...)} {
			if _, stderr, code := kiln(t, a...); code != 0 {
				t.Fatalf("%v: exit %d: %s", a, code, stderr)
			}
		}
		for _, m := range []string{g, h} {
			out, stderr, code := kiln(t, "inspect", m)
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Errorf("inspect %s: exit %d, want %q:\n%s%s", m, code, tc.want, out, stderr)
			}
		}
	}
	out, _, code := kiln(t, "inspect", filepath.Join(dir, "linear-2.gguf"))
	if code != 0 || strings.Contains(out, "yarn") {
		t.Errorf("linear model inspects as yarn:\n%s", out)
	}
	for _, bad := range []string{"yarn:4", "yarn:0:64", "yarn:4:-1", "ntk:4", "linear:x"} {
		_, stderr, code := kiln(t, "synth", filepath.Join(dir, "bad.gguf"), "--arch", "qwen2", "--dim", "64", "--layers", "1",
			"--heads", "4", "--ffn", "64", "--vocab-size", "300", "--rope-scaling", bad)
		if code != 2 || !strings.Contains(stderr, "--rope-scaling") {
			t.Errorf("--rope-scaling %s: exit %d, want a usage error naming the flag: %s", bad, code, stderr)
		}
	}
}
