package hub

import (
	"context"
	"fmt"
)

// Resolve turns a MODEL argument into a local file path. A local path comes
// back unchanged (not even checked: opening it gives the better error). An
// "hf:" reference is looked up in the cache and downloaded when missing;
// a cached file is used without asking the hub (Pull checks for updates).
func Resolve(ctx context.Context, ref string, opts Options) (string, error) {
	if !IsRef(ref) {
		return ref, nil
	}
	c, err := New(opts)
	if err != nil {
		return "", err
	}
	m, err := c.Resolve(ctx, ref)
	if err != nil {
		return "", err
	}
	return m.Path, nil
}

// Resolve returns the cached file a reference names, downloading it first
// when the cache does not hold it at the client's revision. A reference by
// quantization tag is matched against the cached files of its repository
// first, so it too works offline once pulled.
func (c *Client) Resolve(ctx context.Context, ref string) (Manifest, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return Manifest{}, err
	}
	if r.File == "" {
		if f, ok := c.cachedPick(r); ok {
			r = r.withFile(f)
		}
	}
	if r.File != "" {
		if m, ok := c.cached(r); ok {
			return m, nil
		}
	}
	m, _, err := c.fetch(ctx, r, false)
	return m, err
}

// Pull asks the hub for the file a reference names and downloads it unless
// the cache already holds the same content (same sha256, or same entity tag
// and size; when the hub publishes neither, a cached file is kept).
// fresh reports whether bytes were downloaded.
func (c *Client) Pull(ctx context.Context, ref string) (m Manifest, fresh bool, err error) {
	r, err := ParseRef(ref)
	if err != nil {
		return Manifest{}, false, err
	}
	return c.fetch(ctx, r, true)
}

// fetch picks the file (listing the repository for a tag), takes its lock,
// asks the hub about it and downloads it unless the cache has it: any
// cached copy when update is false (another process may have finished it
// while we waited for the lock), only the same content when true.
func (c *Client) fetch(ctx context.Context, r Ref, update bool) (Manifest, bool, error) {
	var listed *RepoFile
	if r.File == "" {
		files, err := c.Files(ctx, r.Owner, r.Repo)
		if err != nil {
			return Manifest{}, false, err
		}
		f, err := Pick(files, r.Quant)
		if err != nil {
			return Manifest{}, false, fmt.Errorf("%w: %s: %v", ErrNotFound, r, err)
		}
		if c.opts.Progress != nil {
			fmt.Fprintf(c.opts.Progress, "%s is %s (%s)\n", r, f.Path, FormatBytes(f.Size))
		}
		r, listed = r.withFile(f.Path), &f
	}
	p := c.pathsFor(r)
	unlock, err := lock(ctx, p.lock, func() {
		if c.opts.Progress != nil {
			fmt.Fprintf(c.opts.Progress, "waiting for another download of %s to finish\n", r)
		}
	})
	if err != nil {
		return Manifest{}, false, fmt.Errorf("hub: waiting for %s: %w", r, err)
	}
	defer unlock()
	cached, have := c.cached(r)
	if have && !update {
		return cached, false, nil
	}

	var rm remote
	err = c.retry(ctx, func() (bool, error) {
		var err error
		rm, err = c.headHub(ctx, r)
		return false, err
	})
	if err != nil {
		return Manifest{}, false, err
	}
	if listed != nil {
		// The listing names the same object; fill what HEAD did not say.
		if rm.sha256 == "" && listed.SHA256 != "" {
			rm.sha256 = listed.SHA256
		}
		if rm.size < 0 {
			rm.size = listed.Size
		}
	}
	if have && sameContent(cached, rm) {
		return cached, false, nil
	}
	m, err := c.download(ctx, r, rm)
	if err != nil {
		return Manifest{}, false, err
	}
	return m, true, nil
}

// sameContent reports whether the cached file is what the hub now serves.
func sameContent(m Manifest, rm remote) bool {
	switch {
	case rm.sha256 != "":
		return m.SHA256 == rm.sha256
	case rm.etag != "":
		return m.ETag == rm.etag && (rm.size < 0 || rm.size == m.Size)
	case rm.size >= 0:
		return rm.size == m.Size
	}
	return true // the hub says nothing to compare: keep what we have
}

// cachedPick applies Pick to the repository's cached files at the client's
// revision; ok is false when that picks nothing.
func (c *Client) cachedPick(r Ref) (file string, ok bool) {
	all, err := c.List()
	if err != nil {
		return "", false
	}
	var files []RepoFile
	for _, m := range all {
		mr, err := ParseRef(m.Ref)
		if err == nil && mr.Owner == r.Owner && mr.Repo == r.Repo && m.Revision == c.opts.Revision {
			files = append(files, RepoFile{Path: mr.File, Size: m.Size, SHA256: m.SHA256})
		}
	}
	if len(files) == 0 {
		return "", false
	}
	f, err := Pick(files, r.Quant)
	if err != nil {
		return "", false
	}
	return f.Path, true
}
