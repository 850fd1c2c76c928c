package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Manifest records one complete, cached file. It is written after the file
// has been renamed into place; a file without its manifest, or whose size
// differs from it, is not cached.
type Manifest struct {
	Ref        string    `json:"ref"`              // hf:OWNER/REPO/FILE
	Revision   string    `json:"revision"`         // as asked for: branch, tag or commit
	Commit     string    `json:"commit,omitempty"` // the commit the hub resolved it to
	URL        string    `json:"url"`              // resolve URL it was downloaded from
	Size       int64     `json:"size"`             // bytes
	SHA256     string    `json:"sha256"`           // of the bytes on disk, computed while downloading
	Verified   bool      `json:"verified"`         // the hub published this sha256 and it matched
	ETag       string    `json:"etag,omitempty"`   // the hub's entity tag, to tell a changed file
	Downloaded time.Time `json:"downloaded"`       // when the download finished (UTC)

	Path string `json:"-"` // the local file (filled when read)
}

// paths are the cache files of one hub file (see the layout in doc.go).
type paths struct {
	final       string // models/OWNER/REPO/FILE
	partial     string // models/OWNER/REPO/FILE.partial
	partialInfo string // models/OWNER/REPO/FILE.partial.json
	manifest    string // manifests/OWNER/REPO/FILE.json
	lock        string // locks/OWNER/REPO/FILE.lock
}

func (c *Client) pathsFor(r Ref) paths {
	rel := filepath.Join(r.Owner, r.Repo, filepath.FromSlash(r.File))
	final := filepath.Join(c.opts.Home, "models", rel)
	return paths{
		final:       final,
		partial:     final + ".partial",
		partialInfo: final + ".partial.json",
		manifest:    filepath.Join(c.opts.Home, "manifests", rel) + ".json",
		lock:        filepath.Join(c.opts.Home, "locks", rel) + ".lock",
	}
}

// cached returns the manifest of a complete file at the client's revision,
// or ok false when there is none (or it does not match the file on disk).
func (c *Client) cached(r Ref) (Manifest, bool) {
	p := c.pathsFor(r)
	m, err := readManifest(p.manifest)
	if err != nil || m.Ref != r.String() || m.Revision != c.opts.Revision {
		return Manifest{}, false
	}
	st, err := os.Stat(p.final)
	if err != nil || !st.Mode().IsRegular() || st.Size() != m.Size {
		return Manifest{}, false
	}
	m.Path = p.final
	return m, true
}

func readManifest(path string) (Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("hub: manifest %s: %v", path, err)
	}
	return m, nil
}

// writeJSON writes v to path atomically: a temporary file in the same
// directory, synced, then renamed over path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("hub: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("hub: %v", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*.json")
	if err != nil {
		return fmt.Errorf("hub: %v", err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("hub: writing %s: %v", path, err)
	}
	return nil
}

// List returns every complete file in the cache, sorted by reference, at
// whatever revision it was downloaded. It makes no request.
func (c *Client) List() ([]Manifest, error) {
	root := filepath.Join(c.opts.Home, "manifests")
	var out []Manifest
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".json") || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(root, strings.TrimSuffix(path, ".json"))
		if err != nil {
			return nil
		}
		parts := strings.SplitN(filepath.ToSlash(rel), "/", 3)
		if len(parts) != 3 {
			return nil
		}
		r := Ref{Owner: parts[0], Repo: parts[1], File: parts[2]}
		m, err := readManifest(path)
		if err != nil || m.Ref != r.String() {
			return nil // not ours, or damaged: not listed, and Resolve downloads again
		}
		final := c.pathsFor(r).final
		if st, err := os.Stat(final); err != nil || st.Size() != m.Size {
			return nil
		}
		m.Path = final
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hub: listing the cache: %v", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

// Removed is one file Remove deleted.
type Removed struct {
	Ref   string // hf:OWNER/REPO/FILE
	Freed int64  // bytes: the file and any partial download of it
}

// Remove deletes cached files: hf:OWNER/REPO/FILE names one (a partial
// download of it included); hf:OWNER/REPO:QUANT and hf:OWNER/REPO pick
// among the repository's cached files as Pick does among the hub's. It
// makes no request, and refuses while another download of the file runs.
func (c *Client) Remove(ref string) (Removed, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return Removed{}, err
	}
	if r.File == "" {
		all, err := c.List()
		if err != nil {
			return Removed{}, err
		}
		var files []RepoFile
		for _, m := range all {
			mr, err := ParseRef(m.Ref)
			if err == nil && mr.Owner == r.Owner && mr.Repo == r.Repo {
				files = append(files, RepoFile{Path: mr.File, Size: m.Size})
			}
		}
		if len(files) == 0 {
			return Removed{}, fmt.Errorf("%w: %s has no files in the cache ('kiln list' shows what is there)", ErrNotFound, r.RepoID())
		}
		f, err := Pick(files, r.Quant)
		if err != nil {
			return Removed{}, fmt.Errorf("%w: %s in the cache: %v", ErrNotFound, r, err)
		}
		r = r.withFile(f.Path)
	}
	p := c.pathsFor(r)
	unlock, ok, err := tryLock(p.lock)
	if err != nil {
		return Removed{}, err
	}
	if !ok {
		return Removed{}, fmt.Errorf("hub: %s is being downloaded by another process; stop it first", r)
	}
	defer unlock()
	var freed int64
	found := false
	for _, f := range []string{p.manifest, p.final, p.partial, p.partialInfo} {
		st, err := os.Lstat(f)
		if err != nil {
			continue
		}
		if err := os.Remove(f); err != nil {
			return Removed{}, fmt.Errorf("hub: removing %s: %v", f, err)
		}
		found = true
		if f == p.final || f == p.partial {
			freed += st.Size()
		}
	}
	if !found {
		return Removed{}, fmt.Errorf("%w: %s is not in the cache ('kiln list' shows what is there)", ErrNotFound, r)
	}
	for _, top := range []string{"models", "manifests"} {
		pruneEmpty(filepath.Join(c.opts.Home, top), filepath.Dir(filepath.Join(c.opts.Home, top, r.Owner, r.Repo, filepath.FromSlash(r.File))))
	}
	return Removed{Ref: r.String(), Freed: freed}, nil
}

// pruneEmpty removes dir and its parents while they are empty, stopping at
// root (kept).
func pruneEmpty(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return // not empty, or gone
		}
		dir = filepath.Dir(dir)
	}
}

// lock takes the download lock of one file, waiting while another process
// or goroutine holds it; say is called once if it has to wait.
func lock(ctx context.Context, path string, say func()) (unlock func(), err error) {
	for said := false; ; {
		unlock, ok, err := tryLock(path)
		if err != nil || ok {
			return unlock, err
		}
		if !said && say != nil {
			say()
			said = true
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
