package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChildNeedData is run by TestNeedData in a child process (it fails or
// skips on purpose); on its own it does nothing.
func TestChildNeedData(t *testing.T) {
	switch os.Getenv("KILN_TESTUTIL_CHILD") {
	case "shared":
		SharedModel(t, "stories260K.gguf")
		t.Log("not reached: the data is missing")
	case "readdir":
		ReadData(t, t.TempDir()) // exists, but a folder cannot be read as a file
		t.Log("not reached: the read fails")
	}
}

// TestNeedData: missing shared data skips outside CI and fails under
// CI=true; data that exists but cannot be read fails in both.
func TestNeedData(t *testing.T) {
	for _, tc := range []struct {
		child, ci string
		fail      bool
		says      string
	}{
		{"shared", "", false, "SKIP"},
		{"shared", "true", true, "CI=true and"},
		{"readdir", "", true, "is a directory"},
		{"readdir", "true", true, "is a directory"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildNeedData$", "-test.v")
		cmd.Env = append(os.Environ(), "KILN_TESTUTIL_CHILD="+tc.child, "CI="+tc.ci,
			"KILN_SHARED="+filepath.Join(t.TempDir(), "nonexistent"))
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.fail || !strings.Contains(string(out), tc.says) {
			t.Errorf("%s with CI=%q: failed %v (want %v), output lacks %q:\n%s", tc.child, tc.ci, failed, tc.fail, tc.says, out)
		}
	}
}
