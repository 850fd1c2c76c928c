package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// partialState is the .partial.json beside a partial download: what its
// bytes are a prefix of. A partial is resumed only when the hub still
// describes the file the same way (same sha256, or same entity tag, and
// same size); otherwise it is started over.
type partialState struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256,omitempty"`
	ETag   string `json:"etag,omitempty"`
	Size   int64  `json:"size"` // -1: unknown
}

// resumable reports whether bytes written for old may continue as bytes of
// now. Without a sha256 or entity tag nothing proves it, so no.
func (old partialState) resumable(now partialState) bool {
	switch {
	case now.SHA256 != "":
		return old.SHA256 == now.SHA256 && old.Size == now.Size
	case now.ETag != "":
		return old.ETag == now.ETag && old.Size == now.Size
	}
	return false
}

// download fetches rm into the cache for r: resume or start the .partial,
// GET with Range from its end (retrying as Options says), hash everything,
// verify against the hub's sha256, then rename into place and write the
// manifest. The caller holds the file's lock.
func (c *Client) download(ctx context.Context, r Ref, rm remote) (Manifest, error) {
	p := c.pathsFor(r)
	st := partialState{URL: rm.url, SHA256: rm.sha256, ETag: rm.etag, Size: rm.size}
	f, offset, err := openPartial(p, st)
	if err != nil {
		return Manifest{}, err
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()

	t := &transfer{c: c, r: r, rm: rm, f: f, h: sha256.New(), size: rm.size}
	if offset > 0 {
		// The digest covers the whole file: hash the prefix already on disk.
		if _, err := io.Copy(t.h, io.NewSectionReader(f, 0, offset)); err != nil {
			return Manifest{}, fmt.Errorf("hub: reading %s: %v", p.partial, err)
		}
		t.offset = offset
	}
	if c.opts.Progress != nil {
		if offset > 0 {
			fmt.Fprintf(c.opts.Progress, "resuming %s at %s\n", r, FormatBytes(offset))
		}
		t.meter = newMeter(c.opts.Progress, c.opts.Terminal, path.Base(r.File), rm.size, offset, c.opts.now)
	}
	err = c.retry(ctx, func() (bool, error) {
		progressed, err := t.attempt(ctx)
		if err != nil {
			t.meter.breakLine() // the retry notice goes on a line of its own
		}
		return progressed, err
	})
	t.meter.finish()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("hub: downloading %s: %w", r, ctx.Err())
		}
		if t.offset > 0 {
			return Manifest{}, fmt.Errorf("%w (%s kept in %s: run again to resume)", err, FormatBytes(t.offset), p.partial)
		}
		return Manifest{}, err
	}

	sum := hex.EncodeToString(t.h.Sum(nil))
	if rm.sha256 != "" && sum != rm.sha256 {
		f.Close()
		f = nil
		os.Remove(p.partial)
		os.Remove(p.partialInfo)
		return Manifest{}, fmt.Errorf("%w: %s: the download hashes to sha256 %s but the hub says %s; it was deleted: run again (a proxy or disk may be corrupting data)", ErrChecksum, r, sum, rm.sha256)
	}
	if err := f.Sync(); err != nil {
		return Manifest{}, fmt.Errorf("hub: writing %s: %v", p.partial, err)
	}
	if err := f.Close(); err != nil {
		return Manifest{}, fmt.Errorf("hub: writing %s: %v", p.partial, err)
	}
	f = nil
	// The old manifest goes first: a crash after the rename leaves a file
	// without a manifest, which is downloaded again rather than trusted.
	if err := os.Remove(p.manifest); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Manifest{}, fmt.Errorf("hub: %v", err)
	}
	if err := os.Rename(p.partial, p.final); err != nil {
		return Manifest{}, fmt.Errorf("hub: %v", err)
	}
	os.Remove(p.partialInfo)
	m := Manifest{
		Ref:        r.String(),
		Revision:   c.opts.Revision,
		Commit:     rm.commit,
		URL:        rm.url,
		Size:       t.offset,
		SHA256:     sum,
		Verified:   rm.sha256 != "",
		ETag:       rm.etag,
		Downloaded: c.opts.now().UTC().Truncate(time.Second),
		Path:       p.final,
	}
	if err := writeJSON(p.manifest, m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// openPartial opens the .partial for appending: kept when its state file
// says it is a prefix of st, emptied otherwise (or when longer than st's
// size). It records st beside it before any byte is written, and returns the
// bytes already there.
func openPartial(p paths, st partialState) (*os.File, int64, error) {
	if err := os.MkdirAll(filepath.Dir(p.final), 0o755); err != nil {
		return nil, 0, fmt.Errorf("hub: %v", err)
	}
	var old partialState
	keep := false
	if b, err := os.ReadFile(p.partialInfo); err == nil && json.Unmarshal(b, &old) == nil {
		keep = old.resumable(st)
	}
	f, err := os.OpenFile(p.partial, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, fmt.Errorf("hub: %v", err)
	}
	n, err := f.Seek(0, io.SeekEnd)
	if err == nil && (!keep || (st.Size >= 0 && n > st.Size)) {
		n, err = 0, f.Truncate(0)
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
	}
	if err == nil {
		err = writeJSON(p.partialInfo, st)
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("hub: preparing %s: %v", p.partial, err)
	}
	return f, n, nil
}

// transfer is one file's download state across attempts.
type transfer struct {
	c      *Client
	r      Ref
	rm     remote
	f      *os.File  // the .partial, positioned at offset
	h      hash.Hash // sha256 of bytes [0, offset)
	offset int64     // bytes in f
	size   int64     // expected total bytes; -1 until a response says
	meter  *meter
	buf    []byte
}

// attempt makes one GET from offset. It returns whether bytes arrived (so
// the retry count starts over) and an error that isTransient may retry.
//
//	have [0, off)          ask Range: bytes=off-    (no Range when off == 0)
//	206 bytes off-(n-1)/n  append
//	200                    the server ignored Range: empty the partial, take all
//	416 bytes */n          n == off: it was complete; else start over
func (t *transfer) attempt(ctx context.Context) (progressed bool, err error) {
	if t.size >= 0 && t.offset == t.size {
		return false, nil
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := time.AfterFunc(t.c.opts.StallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()

	rctx, done := t.c.bounded(actx, hostOf(t.rm.get))
	defer done()
	req, err := newRequest(rctx, http.MethodGet, t.rm.get)
	if err != nil {
		return false, err
	}
	// A compressed body would not be the bytes the hub's sha256 is of, and
	// ranges of it would be ranges of the compressed form.
	req.Header.Set("Accept-Encoding", "identity")
	if t.offset > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(t.offset, 10)+"-")
	}
	resp, err := t.c.http.Do(req)
	if err != nil {
		if we := waitCause(rctx); we != nil {
			return false, fmt.Errorf("hub: downloading %s: %w", t.r, we)
		}
		return false, t.readError(ctx, actx, err)
	}
	defer resp.Body.Close()

	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, _, total, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil || start != t.offset {
			if t.offset == 0 {
				return false, fmt.Errorf("hub: downloading %s: unexpected partial answer (Content-Range %q) to a request for the whole file", t.r, resp.Header.Get("Content-Range"))
			}
			if err := t.restart(); err != nil {
				return false, err
			}
			resp.Body.Close()
			return t.attempt(ctx)
		}
		if err := t.learnSize(total); err != nil {
			return false, err
		}
	case http.StatusOK:
		if t.offset > 0 {
			if t.c.opts.Progress != nil {
				t.meter.breakLine()
				fmt.Fprintf(t.c.opts.Progress, "the server ignored the range request; downloading %s from the start\n", t.r)
			}
			if err := t.restart(); err != nil {
				return false, err
			}
		}
		if err := t.learnSize(resp.ContentLength); err != nil {
			return false, err
		}
	case http.StatusRequestedRangeNotSatisfiable:
		_, _, total, err := parseContentRange(resp.Header.Get("Content-Range"))
		if t.offset > 0 && err == nil && total == t.offset && (t.size < 0 || t.size == total) {
			t.size = total // the partial already held every byte
			return false, nil
		}
		if t.offset == 0 {
			return false, t.c.statusError(resp, t.r)
		}
		if err := t.restart(); err != nil {
			return false, err
		}
		resp.Body.Close()
		return t.attempt(ctx)
	default:
		return false, t.c.statusError(resp, t.r)
	}

	before := t.offset
	err = t.copy(ctx, actx, &stallReader{r: resp.Body, timer: stall, d: t.c.opts.StallTimeout})
	progressed = t.offset > before
	if err != nil {
		return progressed, err
	}
	if t.size >= 0 && t.offset < t.size {
		return progressed, &netError{op: "downloading " + t.r.String(), err: fmt.Errorf("connection closed after %s of %s", FormatBytes(t.offset), FormatBytes(t.size))}
	}
	if t.size < 0 {
		t.size = t.offset // no length given: the end of the body is the end
	}
	return progressed, nil
}

// learnSize checks a size a response states (-1: none) against what the
// hub said; they differ only when the file changed between requests or the
// CDN serves something else.
func (t *transfer) learnSize(n int64) error {
	switch {
	case n < 0:
	case t.size < 0:
		t.size = n
	case n != t.size:
		return fmt.Errorf("hub: downloading %s: the hub says %d bytes but the download server sends %d; run again", t.r, t.size, n)
	}
	if t.meter != nil {
		t.meter.total = t.size
	}
	return nil
}

// restart empties the partial: the next bytes are the file's first.
func (t *transfer) restart() error {
	if err := t.f.Truncate(0); err != nil {
		return fmt.Errorf("hub: %v", err)
	}
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("hub: %v", err)
	}
	t.h.Reset()
	t.offset = 0
	t.meter.set(0)
	return nil
}

// copy appends the body to the partial and the digest. Read errors are
// transient (the connection); write errors are not (the disk).
func (t *transfer) copy(ctx, actx context.Context, body io.Reader) error {
	if t.buf == nil {
		t.buf = make([]byte, 1<<20)
	}
	for {
		n, rerr := body.Read(t.buf)
		if n > 0 {
			if t.size >= 0 && t.offset+int64(n) > t.size {
				return fmt.Errorf("hub: downloading %s: the server sent more than the %d bytes it announced", t.r, t.size)
			}
			if _, err := t.f.Write(t.buf[:n]); err != nil {
				return fmt.Errorf("hub: writing %s: %v", t.f.Name(), err)
			}
			t.h.Write(t.buf[:n])
			t.offset += int64(n)
			t.meter.set(t.offset)
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return t.readError(ctx, actx, rerr)
		}
	}
}

// readError classifies a failed request or body read: the caller's
// cancellation stays as it is, a stall or a broken connection is transient.
func (t *transfer) readError(parent, actx context.Context, err error) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	if errors.Is(err, errStalled) || errors.Is(context.Cause(actx), errStalled) {
		err = fmt.Errorf("no data for %v", t.c.opts.StallTimeout)
	}
	return &netError{op: "downloading " + t.r.String(), err: err}
}

// stallReader pushes the stall deadline back whenever bytes arrive; when it
// fires, the attempt's context is cancelled with errStalled.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.d)
	}
	return n, err
}

// parseContentRange reads "bytes START-END/TOTAL", "bytes START-END/*" and
// "bytes */TOTAL" (RFC 9110 14.4). Unknown parts are -1.
func parseContentRange(s string) (start, end, total int64, err error) {
	start, end, total = -1, -1, -1
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !ok {
		return start, end, total, fmt.Errorf("hub: Content-Range %q: want bytes ...", s)
	}
	rng, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return start, end, total, fmt.Errorf("hub: Content-Range %q: no total", s)
	}
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil || total < 0 {
			return -1, -1, -1, fmt.Errorf("hub: Content-Range %q: bad total", s)
		}
	}
	if rng == "*" {
		if total < 0 {
			return -1, -1, -1, fmt.Errorf("hub: Content-Range %q: neither range nor total", s)
		}
		return start, end, total, nil
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return -1, -1, -1, fmt.Errorf("hub: Content-Range %q: bad range", s)
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start || (total >= 0 && end >= total) {
		return -1, -1, -1, fmt.Errorf("hub: Content-Range %q: bad range", s)
	}
	return start, end, total, nil
}
