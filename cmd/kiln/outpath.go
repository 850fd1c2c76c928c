package main

import (
	"os"
	"path/filepath"
	"strings"
)

// checkOutput refuses an OUT path that would replace one of the inputs:
// the same file (os.SameFile, so a hard link or a symlink to it counts
// too) as any of files, or, for each folder in dirs (a Hugging Face
// folder being read), an existing file in that folder which a conversion
// reads (see readsFromFolder). The outputs are written to a temporary
// file renamed over OUT at the end, so without this check `kiln quantize
// X X` or `kiln convert DIR DIR/model.safetensors` would finish cleanly
// with the input gone. A usage error: exit status 2.
func checkOutput(out string, files, dirs []string) error {
	ost, err := os.Stat(out)
	if err != nil {
		return nil // nothing there to replace (or nothing we can see)
	}
	for _, in := range files {
		if ist, err := os.Stat(in); err == nil && os.SameFile(ist, ost) {
			return usageErrorf("OUT %s is the input %s: writing it would destroy the input; name another file", out, in)
		}
	}
	parent, err := os.Stat(filepath.Dir(out))
	if err != nil {
		return nil
	}
	for _, dir := range dirs {
		if dst, err := os.Stat(dir); err == nil && os.SameFile(dst, parent) && readsFromFolder(filepath.Base(out)) {
			return usageErrorf("OUT %s would replace %s in the input folder %s; name a file outside the folder, or a new name", out, filepath.Base(out), dir)
		}
	}
	return nil
}

// readsFromFolder reports whether a file of this name in a Hugging Face
// folder is one that loading or converting the folder may read: the
// weights (*.safetensors and their index), JSON (config, tokenizer,
// generation config) and tokenizer files (tokenizer.model, merges.txt,
// vocab.txt).
func readsFromFolder(name string) bool {
	for _, ext := range []string{".safetensors", ".json", ".model", ".txt", ".tiktoken"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}
