// Package testutil holds helpers shared by kiln's tests: locating the
// workplace's shared/ folder (real models, tokenizer data) beside the clone.
package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"kiln/gguf"
)

// RepoRoot returns the directory holding kiln's go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testutil: go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// SharedModels returns ../shared/models beside the repository, or skips the
// test with a message when it is absent (a clone outside the workplace).
// KILN_SHARED overrides the location of shared/.
func SharedModels(t testing.TB) string {
	t.Helper()
	shared := os.Getenv("KILN_SHARED")
	if shared == "" {
		shared = filepath.Join(RepoRoot(t), "..", "shared")
	}
	dir := filepath.Join(shared, "models")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("skipping: %s not found (real models live in ../shared/models beside the clone)", dir)
	}
	return dir
}

// SharedModel returns the path of one file under shared/models, skipping
// the test when it is absent.
func SharedModel(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(SharedModels(t), name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: %s not found", p)
	}
	return p
}

// PatchTensor copies the GGUF file src into a temporary directory, lets
// patch rewrite the bytes of its tensor name, and returns the copy's path:
// corrupt or mis-typed files for tests of what kiln does with them.
func PatchTensor(t testing.TB, src, name string, patch func(data []byte)) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	ti, ok := f.Tensor(name)
	if !ok {
		f.Close()
		t.Fatalf("%s has no tensor %s", src, name)
	}
	start, size := f.DataOffset+ti.Offset, ti.Size
	f.Close()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	patch(b[start : start+size])
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
