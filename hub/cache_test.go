package hub

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln/hub/hubtest"
)

func TestListAndRemove(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	standardRepo(s)
	s.AddFile("other/repo", "deep/dir/x-Q4_0.gguf", blob(777, 11), true)
	c := testClient(t, s, nil)
	ctx := context.Background()
	for _, ref := range []string{"hf:" + repoID + ":Q4_K_M", "hf:" + repoID + ":Q8_0", "hf:" + repoID + "/small.gguf", "hf:other/repo:Q4_0"} {
		if _, err := c.Resolve(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range list {
		got = append(got, m.Ref)
		if st, err := os.Stat(m.Path); err != nil || st.Size() != m.Size {
			t.Errorf("%s: path %s: %v", m.Ref, m.Path, err)
		}
	}
	want := []string{"hf:" + repoID + "/small.gguf", "hf:" + repoID + "/tiny-Q4_K_M.gguf", "hf:" + repoID + "/tiny-Q8_0.gguf", "hf:other/repo/deep/dir/x-Q4_0.gguf"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("List = %v, want %v", got, want)
	}

	// A leftover partial of another file counts when that file is removed.
	partial := c.pathsFor(mustRef(t, "hf:"+repoID+"/tiny-Q4_K_S.gguf")).partial
	if err := os.WriteFile(partial, make([]byte, 1234), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		ref   string
		freed int64
		gone  string // reference no longer listed
		err   error
		msg   string
	}{
		{ref: "hf:" + repoID + ":q8_0", freed: 200_000, gone: "hf:" + repoID + "/tiny-Q8_0.gguf"},
		{ref: "hf:" + repoID + "/small.gguf", freed: int64(len(smallFile)), gone: "hf:" + repoID + "/small.gguf"},
		{ref: "hf:" + repoID + "/tiny-Q4_K_S.gguf", freed: 1234},
		{ref: "hf:" + repoID + "/small.gguf", err: ErrNotFound, msg: "not in the cache"},
		{ref: "hf:" + repoID + ":Q5_0", err: ErrNotFound, msg: "no model file with quantization"},
		{ref: "hf:nobody/nothing", err: ErrNotFound, msg: "no files in the cache"},
		{ref: "hf:" + repoID, freed: int64(len(bigFile)), gone: "hf:" + repoID + "/tiny-Q4_K_M.gguf"},
		{ref: "hf:other/repo/deep/dir/x-Q4_0.gguf", freed: 777, gone: "hf:other/repo/deep/dir/x-Q4_0.gguf"},
		{ref: "not-a-ref", msg: "not a hub reference"},
	}
	for _, tt := range tests {
		r, err := c.Remove(tt.ref)
		if tt.msg != "" {
			if err == nil || !strings.Contains(err.Error(), tt.msg) || tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("Remove(%s) = %+v, %v; want an error with %q", tt.ref, r, err, tt.msg)
			}
			continue
		}
		if err != nil || r.Freed != tt.freed {
			t.Errorf("Remove(%s) = %+v, %v; want %d bytes freed", tt.ref, r, err, tt.freed)
			continue
		}
		list, _ := c.List()
		for _, m := range list {
			if m.Ref == tt.gone {
				t.Errorf("Remove(%s): %s still listed", tt.ref, m.Ref)
			}
		}
	}
	if list, _ := c.List(); len(list) != 0 {
		t.Errorf("cache not empty: %+v", list)
	}
	// Empty directories went with the files; the roots stay.
	for _, dir := range []string{"models", "manifests"} {
		entries, err := os.ReadDir(filepath.Join(c.Home(), dir))
		if err != nil || len(entries) != 0 {
			t.Errorf("%s: %v, %v; want an empty directory", dir, entries, err)
		}
	}
}

// A file whose size no longer matches its manifest (truncated, replaced by
// hand) is neither listed nor served: Resolve downloads it again.
func TestDamagedCacheEntry(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	standardRepo(s)
	c := testClient(t, s, nil)
	ref := "hf:" + repoID + "/tiny-Q4_K_M.gguf"
	m, err := c.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(m.Path, 10); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.List(); len(list) != 0 {
		t.Errorf("damaged file listed: %+v", list)
	}
	m, err = c.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	checkContent(t, m.Path, bigFile)
}

func TestListEmptyCache(t *testing.T) {
	c, err := New(Options{Home: filepath.Join(t.TempDir(), "absent"), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.List()
	if err != nil || len(list) != 0 {
		t.Errorf("List of a missing cache = %v, %v", list, err)
	}
}

// Remove refuses while another holder has the file's download lock.
func TestRemoveWhileDownloading(t *testing.T) {
	c, err := New(Options{Home: t.TempDir(), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	r := mustRef(t, "hf:o/r/x.gguf")
	unlock, ok, err := tryLock(c.pathsFor(r).lock)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	defer unlock()
	if _, err := c.Remove(r.String()); err == nil || !strings.Contains(err.Error(), "being downloaded") {
		t.Errorf("Remove during a download: %v", err)
	}
}
