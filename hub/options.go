package hub

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultEndpoint is the hub used when neither Options.Endpoint nor the
// environment names one.
const DefaultEndpoint = "https://huggingface.co"

// Options configures a Client. The zero value works: every empty field is
// taken from the environment or a documented default.
type Options struct {
	// Endpoint is the hub's base URL (scheme, host, optional path prefix).
	// Empty: $KILN_HF_ENDPOINT, then $HF_ENDPOINT, then DefaultEndpoint.
	Endpoint string
	// Token is sent as "Authorization: Bearer TOKEN" to the endpoint's own
	// scheme and host only, never to a CDN it redirects to (as huggingface_hub).
	// Empty: $HF_TOKEN, then $HUGGING_FACE_HUB_TOKEN, then the file that
	// `huggingface-cli login` writes ($HF_TOKEN_PATH, $HF_HOME/token,
	// ~/.cache/huggingface/token). NoToken turns all of that off.
	Token   string
	NoToken bool
	// Home is the cache root. Empty: $KILN_HOME, then $XDG_CACHE_HOME/kiln,
	// then ~/.cache/kiln.
	Home string
	// Revision is the branch, tag or commit to download from. Empty: "main".
	Revision string
	// Progress receives a progress display while downloading; nil: none.
	Progress io.Writer
	// Terminal says Progress is a terminal: one line redrawn in place. When
	// false, plain lines at most every 5 seconds and one at the end.
	Terminal bool
	// Retries is how many more times a failed transfer (network error, 5xx,
	// 429, stall) is retried, resuming where it stopped; the count starts over
	// whenever an attempt made progress. 0: 3. Negative: no retries.
	Retries int
	// RetryWait is the pause before the first retry, doubled each time.
	// 0: one second.
	RetryWait time.Duration
	// ConnectTimeout bounds the wait for a connection (DNS, TCP, TLS) and
	// ResponseTimeout, once connected, the wait for the first byte of the
	// response. Either one firing fails the request at once with a
	// *WaitError that says which, without retries. 0: 10 and 20 seconds.
	ConnectTimeout  time.Duration
	ResponseTimeout time.Duration
	// StallTimeout aborts an attempt of a running download when no body
	// byte arrives for this long (and bounds a whole HEAD or listing
	// request). 0: one minute.
	StallTimeout time.Duration
	// HTTPClient sends the requests; nil: a client built on
	// http.DefaultTransport. Its Transport is wrapped to add the token.
	HTTPClient *http.Client
	// Getenv reads the environment; nil: os.Getenv. Tests pass a map.
	Getenv func(string) string

	now func() time.Time // clock for the progress display; nil: time.Now
}

// Validate reports fields that cannot work, before any request is made.
func (o Options) Validate() error {
	if o.RetryWait < 0 || o.StallTimeout < 0 || o.ConnectTimeout < 0 || o.ResponseTimeout < 0 {
		return fmt.Errorf("hub: RetryWait, ConnectTimeout, ResponseTimeout and StallTimeout must not be negative")
	}
	if o.Endpoint != "" {
		if _, err := parseEndpoint(o.Endpoint); err != nil {
			return err
		}
	}
	if strings.ContainsAny(o.Revision, "\x00\r\n") {
		return fmt.Errorf("hub: revision %q has control characters", o.Revision)
	}
	return nil
}

// resolved fills every empty field of o from the environment and defaults.
func (o Options) resolved() (Options, error) {
	if err := o.Validate(); err != nil {
		return o, err
	}
	env := o.Getenv
	if env == nil {
		env = os.Getenv
	}
	if o.Endpoint == "" {
		o.Endpoint = firstNonEmpty(env("KILN_HF_ENDPOINT"), env("HF_ENDPOINT"), DefaultEndpoint)
	}
	if _, err := parseEndpoint(o.Endpoint); err != nil {
		return o, err
	}
	if o.NoToken {
		o.Token = ""
	} else if o.Token == "" {
		o.Token = envToken(env)
	}
	if o.Home == "" {
		switch {
		case env("KILN_HOME") != "":
			o.Home = env("KILN_HOME")
		case env("XDG_CACHE_HOME") != "":
			o.Home = filepath.Join(env("XDG_CACHE_HOME"), "kiln")
		case env("HOME") != "":
			o.Home = filepath.Join(env("HOME"), ".cache", "kiln")
		default:
			return o, fmt.Errorf("hub: no cache directory: set KILN_HOME (or HOME)")
		}
	}
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.Retries == 0 {
		o.Retries = 3
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.RetryWait == 0 {
		o.RetryWait = time.Second
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = time.Minute
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.ResponseTimeout == 0 {
		o.ResponseTimeout = 20 * time.Second
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o, nil
}

// envToken finds a token the way huggingface_hub does: the environment, then
// the file `huggingface-cli login` writes.
func envToken(env func(string) string) string {
	if t := firstNonEmpty(env("HF_TOKEN"), env("HUGGING_FACE_HUB_TOKEN")); t != "" {
		return strings.TrimSpace(t)
	}
	path := env("HF_TOKEN_PATH")
	if path == "" {
		hfHome := env("HF_HOME")
		switch {
		case hfHome != "":
		case env("XDG_CACHE_HOME") != "":
			hfHome = filepath.Join(env("XDG_CACHE_HOME"), "huggingface")
		case env("HOME") != "":
			hfHome = filepath.Join(env("HOME"), ".cache", "huggingface")
		default:
			return ""
		}
		path = filepath.Join(hfHome, "token")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// parseEndpoint accepts an http(s) base URL without query or fragment and
// returns it without a trailing slash.
func parseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil {
		return nil, fmt.Errorf("hub: endpoint %q: %v", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("hub: endpoint %q: want an http:// or https:// URL with a host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("hub: endpoint %q: no query, fragment or user info allowed", s)
	}
	return u, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
