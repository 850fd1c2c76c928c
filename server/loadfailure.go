package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// loadFailure is a model whose load failed: the error every request for
// it gets, until what is on disk changes. Without it each request parsed
// the broken file again (a truncated GGUF, a bad tokenizer, NaN weights)
// only to fail the same way.
type loadFailure struct {
	err   error  // the model_load_failed apiError
	stamp string // diskStamp(path) when it failed
}

// diskStamp fingerprints what a load reads at path: the file's size and
// modification time, or for a folder those of each entry in it, so that
// replacing the file, or a file in the folder, makes the next request
// try again.
func diskStamp(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "missing: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d", st.Size(), st.ModTime().UnixNano())
	if st.IsDir() {
		entries, _ := os.ReadDir(path)
		for _, e := range entries {
			if info, err := os.Stat(filepath.Join(path, e.Name())); err == nil {
				fmt.Fprintf(&b, "|%s %d %d", e.Name(), info.Size(), info.ModTime().UnixNano())
			}
		}
	}
	return b.String()
}

// failedLocked returns the remembered failure of path while its stamp
// holds; a stale one is forgotten. r.mu is held.
func (r *registry) failedLocked(path string) error {
	f, ok := r.failed[path]
	if !ok {
		return nil
	}
	if f.stamp != diskStamp(path) {
		delete(r.failed, path)
		return nil
	}
	return f.err
}
