package hub

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinels for errors.Is on what Resolve, Pull and Remove return.
var (
	// ErrNotFound: the repository, revision or file does not exist (or is
	// private and the token cannot see it), or the reference names nothing
	// in the cache.
	ErrNotFound = errors.New("hub: not found")
	// ErrAccess: the hub refused the request (401/403): gated repository
	// without granted access, missing or invalid token.
	ErrAccess = errors.New("hub: access denied")
	// ErrChecksum: the downloaded bytes do not hash to the sha256 the hub
	// published; the download was deleted.
	ErrChecksum = errors.New("hub: checksum mismatch")
)

// StatusError is an HTTP error status from the hub or its CDN, with the
// hub's own error code (X-Error-Code: RepoNotFound, EntryNotFound,
// RevisionNotFound, GatedRepo) and an explanation of what to do.
type StatusError struct {
	URL     string // request URL
	Status  int    // HTTP status code
	Code    string // X-Error-Code; may be empty
	Message string // X-Error-Message; may be empty
	Hint    string // what went wrong, in the reference's terms, and what to do
}

func (e *StatusError) Error() string {
	s := "hub: " + e.Hint + fmt.Sprintf(" (HTTP %d", e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" && e.Message != e.Hint {
		s += ": " + e.Message
	}
	return s + ", " + e.URL + ")"
}

// Unwrap maps the status onto ErrNotFound or ErrAccess.
func (e *StatusError) Unwrap() error {
	switch {
	case e.Code == "RepoNotFound" || e.Code == "EntryNotFound" || e.Code == "RevisionNotFound" || e.Status == http.StatusNotFound:
		return ErrNotFound
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return ErrAccess
	}
	return nil
}

// transient reports whether retrying the same request may succeed.
func (e *StatusError) transient() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// statusError explains a failed response for ref (File may be empty for the
// listing API). The hub answers 401 both for a gated repository without a
// token and for a missing or private one (it will not say which exists);
// the hint covers both.
func (c *Client) statusError(resp *http.Response, ref Ref) *StatusError {
	e := &StatusError{
		URL:     redactURL(resp.Request.URL.String()),
		Status:  resp.StatusCode,
		Code:    resp.Header.Get("X-Error-Code"),
		Message: resp.Header.Get("X-Error-Message"),
	}
	repo := ref.RepoID()
	page := c.base.String() + "/" + repo
	switch {
	case e.Code == "GatedRepo" && c.opts.Token == "":
		e.Hint = fmt.Sprintf("%s is a gated repository: accept its licence at %s, then set HF_TOKEN to an access token of that account", repo, page)
	case e.Code == "GatedRepo":
		e.Hint = fmt.Sprintf("%s is a gated repository and HF_TOKEN's account has no access yet: accept its licence at %s (or wait for approval)", repo, page)
	case e.Message == "Invalid credentials in Authorization header" || (e.Status == http.StatusUnauthorized && c.opts.Token != "" && e.Code == ""):
		e.Hint = "the hub rejected HF_TOKEN (invalid credentials): create a new token at " + c.base.String() + "/settings/tokens"
	case e.Code == "RevisionNotFound":
		e.Hint = fmt.Sprintf("revision %q not found in %s", c.opts.Revision, repo)
	case e.Code == "EntryNotFound" || (e.Status == http.StatusNotFound && ref.File != "" && e.Code == ""):
		e.Hint = fmt.Sprintf("file %q not found in %s at revision %q", ref.File, repo, c.opts.Revision)
	case e.Status == http.StatusUnauthorized && c.opts.Token == "":
		e.Hint = fmt.Sprintf("repository %s not found, or private or gated: check the name; for a private or gated repository set HF_TOKEN", repo)
	case e.Code == "RepoNotFound" || e.Status == http.StatusNotFound:
		e.Hint = fmt.Sprintf("repository %s not found (or HF_TOKEN's account cannot see it)", repo)
	case e.Status == http.StatusForbidden:
		e.Hint = fmt.Sprintf("access to %s refused: if it is gated, accept its licence at %s and set HF_TOKEN", repo, page)
	case e.Status == http.StatusTooManyRequests:
		e.Hint = "rate-limited by the hub: wait and run again (a token raises the limit)"
	default:
		e.Hint = fmt.Sprintf("fetching %s failed: %s", ref, http.StatusText(e.Status))
	}
	return e
}

// redactURL drops the query of a URL for error messages: CDN URLs carry
// signatures that are long and of no use to the reader.
func redactURL(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '?' {
			return s[:i] + "?…"
		}
	}
	return s
}
