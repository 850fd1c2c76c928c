// Package testutil holds helpers shared by kiln's tests: locating the
// workplace's shared/ folder (real models, tokenizer data) beside the clone.
//
// Data a test needs is a skip only where it may legitimately be absent: a
// clone outside the workplace. Under CI (CI=true) shared/ is always beside
// the clone, so a missing file there means the tests silently stopped
// testing; NeedData fails instead. A file that exists but cannot be read
// fails everywhere.
package testutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// InCI reports whether the tests run under CI (CI=true, as .ci/run's
// callers and most CI systems set it).
func InCI() bool {
	v := os.Getenv("CI")
	return v == "true" || v == "1"
}

// Missing reports that data the test needs is absent: under CI the test
// fails (the data is part of CI's setup, so its absence is a broken setup,
// not a reason to test less); elsewhere it skips with the message.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI=true and %s: CI must have it (skipping is allowed only outside CI)", msg)
	}
	t.Skipf("skipping: %s", msg)
}

// NeedData checks that path (a file or folder a test reads) exists and
// can be read: absent means Missing (skip, or fail under CI); any other
// error (permissions, a broken link, an unreadable folder) fails the test
// everywhere, since the data is there and broken.
func NeedData(t testing.TB, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		Missing(t, "%s not found (test data lives in ../shared beside the clone; KILN_SHARED overrides)", path)
	}
	if err != nil {
		t.Fatalf("test data %s: %v", path, err)
	}
	f, err := os.Open(path)
	if err == nil {
		if st.IsDir() {
			_, err = f.ReadDir(1)
		} else {
			_, err = f.Read(make([]byte, 1))
		}
		if err == io.EOF {
			err = nil // an empty file or folder is readable
		}
		f.Close()
	}
	if err != nil {
		t.Fatalf("test data %s unreadable: %v", path, err)
	}
}

// ReadData reads a data file the test needs: NeedData's rules for absence,
// and a read error fails the test everywhere.
func ReadData(t testing.TB, path string) []byte {
	t.Helper()
	NeedData(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("test data %s: %v", path, err)
	}
	return b
}

// SharedDir returns the workplace's shared/ folder: KILN_SHARED when set,
// else ../shared beside the repository. It does not check that it exists.
func SharedDir(t testing.TB) string {
	t.Helper()
	if s := os.Getenv("KILN_SHARED"); s != "" {
		return s
	}
	return filepath.Join(RepoRoot(t), "..", "shared")
}

// SharedFile returns the path of rel under shared/ (a file or folder),
// after NeedData: a skip when absent locally, a failure under CI.
func SharedFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(SharedDir(t), rel)
	NeedData(t, p)
	return p
}

// SharedModels returns shared/models (see SharedFile).
func SharedModels(t testing.TB) string {
	t.Helper()
	return SharedFile(t, "models")
}

// SharedModel returns the path of one file or folder under shared/models
// (see SharedFile).
func SharedModel(t testing.TB, name string) string {
	t.Helper()
	return SharedFile(t, filepath.Join("models", name))
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
