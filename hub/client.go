package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// userAgent identifies kiln to the hub (its download statistics count by it).
const userAgent = "kiln/0.1 (Go)"

// Client talks to one hub and owns one cache directory. It is safe for
// concurrent use; downloads of the same file, from this or another process,
// are serialized by a lock file.
type Client struct {
	opts Options      // resolved: no empty field left
	base *url.URL     // parsed opts.Endpoint, no trailing slash
	http *http.Client // follows redirects; the token only reaches base's host
	head *http.Client // follows no redirects (headHub walks them itself)
}

// New resolves opts against the environment (see Options) and returns a
// client. It makes no request.
func New(opts Options) (*Client, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	base, err := parseEndpoint(o.Endpoint)
	if err != nil {
		return nil, err
	}
	var hc http.Client
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc.Transport = &authTransport{base: rt, scheme: base.Scheme, host: base.Host, token: o.Token}
	head := hc
	head.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{opts: o, base: base, http: &hc, head: &head}, nil
}

// Home is the cache root the client uses.
func (c *Client) Home() string { return c.opts.Home }

// Endpoint is the hub's base URL the client uses.
func (c *Client) Endpoint() string { return c.base.String() }

// authTransport adds the bearer token to requests for the hub's own scheme
// and host. Being in the transport, it sees every hop of a redirect chain:
// a CDN on another host (or port) never receives the token, whatever the
// client's redirect policy, as huggingface_hub drops "authorization" when
// the redirect's netloc differs.
type authTransport struct {
	base         http.RoundTripper
	scheme, host string
	token        string
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.token != "" && req.URL.Scheme == t.scheme && req.URL.Host == t.host && req.Header.Get("Authorization") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	return t.base.RoundTrip(req)
}

// resolveURL is {base}/{owner}/{repo}/resolve/{revision}/{file}, each file
// segment escaped and the revision one segment (refs/pr/1 -> refs%2Fpr%2F1).
func (c *Client) resolveURL(r Ref, revision string) string {
	segs := strings.Split(r.File, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.base.String() + "/" + r.Owner + "/" + r.Repo + "/resolve/" + url.PathEscape(revision) + "/" + strings.Join(segs, "/")
}

// newRequest builds a request with kiln's User-Agent.
func newRequest(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("hub: %v", err)
	}
	req.Header.Set("User-Agent", userAgent)
	return req, nil
}

// remote is what the hub says about one file before it is downloaded.
type remote struct {
	url    string // resolve URL at the requested revision (the manifest's source)
	get    string // resolve URL pinned to the commit when the hub named one
	sha256 string // lowercase hex from X-Linked-Etag/ETag; "" when not published
	etag   string // the hub's entity tag, unquoted; "" when none
	size   int64  // bytes from X-Linked-Size/Content-Length; -1 when unknown
	commit string // X-Repo-Commit; "" when none
}

// headHub asks the hub about a file with HEAD, following same-host redirects
// (a renamed repository) itself and stopping at the first redirect to another
// host (the CDN): the hub's own response carries X-Linked-Etag (the LFS
// sha256), X-Linked-Size and X-Repo-Commit. A hub that refuses HEAD (405,
// 501) yields an empty description and the download goes on unverified.
func (c *Client) headHub(ctx context.Context, r Ref) (remote, error) {
	rm := remote{url: c.resolveURL(r, c.opts.Revision), size: -1}
	rm.get = rm.url
	// X-Linked-* describe the LFS object wherever they appear in the chain;
	// a plain ETag or Content-Length counts only when no hop gave them.
	var linkedETag, plainETag string
	linkedSize := int64(-1)
	u := rm.url
hops:
	for hop := 0; ; hop++ {
		if hop == 10 {
			return rm, fmt.Errorf("hub: %s: more than 10 redirects", r)
		}
		resp, err := c.headOnce(ctx, u)
		if err != nil {
			return rm, &netError{op: "asking the hub about " + r.String(), err: err}
		}
		h := resp.Header
		if v := normalizeETag(h.Get("X-Linked-Etag")); v != "" {
			linkedETag = v
		}
		if v := normalizeETag(h.Get("ETag")); v != "" {
			plainETag = v
		}
		if v := h.Get("X-Repo-Commit"); v != "" {
			rm.commit = v
		}
		if n, err := strconv.ParseInt(h.Get("X-Linked-Size"), 10, 64); err == nil && n >= 0 {
			linkedSize = n
		}
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400 && h.Get("Location") != "":
			next, err := resp.Request.URL.Parse(h.Get("Location"))
			if err != nil {
				return rm, fmt.Errorf("hub: %s: bad redirect %q: %v", r, h.Get("Location"), err)
			}
			if next.Scheme == c.base.Scheme && next.Host == c.base.Host {
				u = next.String() // renamed repository: ask again where it moved
				continue
			}
			break hops // the CDN: the GET will follow it
		case resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented:
			return rm, nil
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			rm.size = resp.ContentLength // -1 when not given
			break hops
		default:
			return rm, c.statusError(resp, r)
		}
	}
	rm.etag = firstNonEmpty(linkedETag, plainETag)
	if linkedSize >= 0 {
		rm.size = linkedSize
	}
	if isSHA256(rm.etag) {
		rm.sha256 = rm.etag
	}
	if rm.commit != "" && isHex(rm.commit) {
		rm.get = c.resolveURL(r, rm.commit)
	}
	return rm, nil
}

// headOnce makes one HEAD request, bounded by ConnectTimeout and
// ResponseTimeout (a *WaitError) and in all by StallTimeout.
func (c *Client) headOnce(ctx context.Context, u string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StallTimeout)
	defer cancel()
	rctx, done := c.bounded(ctx, hostOf(u))
	defer done()
	req, err := newRequest(rctx, http.MethodHead, u)
	if err != nil {
		return nil, err
	}
	resp, err := c.head.Do(req)
	if err != nil {
		if we := waitCause(rctx); we != nil {
			return nil, we
		}
		return nil, err
	}
	resp.Body.Close() // a HEAD response has no body; headers stay readable
	return resp, nil
}

// normalizeETag strips the weak prefix and quotes: W/"abc" -> abc. Hex is
// lowercased so it compares with a computed digest.
func normalizeETag(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	s = strings.Trim(s, `"`)
	if isHex(s) {
		s = strings.ToLower(s)
	}
	return s
}

func isSHA256(s string) bool { return len(s) == 64 && isHex(s) }

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// netError is a failed round trip (connection refused, reset, timeout,
// truncated body): worth retrying.
type netError struct {
	op  string
	err error
}

func (e *netError) Error() string { return "hub: " + e.op + ": " + e.err.Error() }
func (e *netError) Unwrap() error { return e.err }

// errStalled is the cancel cause when StallTimeout passes without a byte.
var errStalled = errors.New("no data received")

// isTransient reports whether an error is worth a retry: network errors,
// stalls, 5xx and 429, but not the caller's own cancellation.
func isTransient(ctx context.Context, err error) bool {
	var we *WaitError
	if ctx.Err() != nil || errors.As(err, &we) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.transient()
	}
	var ne *netError
	return errors.As(err, &ne)
}

// retry runs op until it succeeds, fails for good, or fails transiently
// more than Retries times in a row; op reports whether it made progress,
// which starts the count over. Waits double from RetryWait.
func (c *Client) retry(ctx context.Context, op func() (progressed bool, err error)) error {
	failures := 0
	wait := c.opts.RetryWait
	for {
		progressed, err := op()
		if err == nil {
			return nil
		}
		if progressed {
			failures, wait = 0, c.opts.RetryWait
		}
		if !isTransient(ctx, err) || failures >= c.opts.Retries {
			return err
		}
		failures++
		if c.opts.Progress != nil {
			fmt.Fprintf(c.opts.Progress, "%v; retrying in %v (%d of %d)\n", err, wait, failures, c.opts.Retries)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}
