package hub

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"
)

// WaitError is a request that got no connection within ConnectTimeout, or
// no first byte of a response within ResponseTimeout once connected. It is
// not retried: a host that does not answer within seconds is misnamed,
// down or unreachable, and retrying would only multiply the wait.
type WaitError struct {
	What string        // "connecting" or "waiting for the first byte of a response"
	Host string        // the host asked
	D    time.Duration // the timeout that fired
}

func (e *WaitError) Error() string {
	switch e.What {
	case waitConnect:
		return fmt.Sprintf("no connection to %s after %v (connect timeout): check the endpoint and the network", e.Host, e.D)
	default:
		return fmt.Sprintf("%s accepted the connection but sent no response in %v (first-byte timeout): is the endpoint a Hugging Face hub?", e.Host, e.D)
	}
}

const (
	waitConnect  = "connecting"
	waitResponse = "waiting for the first byte of a response"
)

// bounded returns a context for one request that is cancelled with a
// *WaitError when connecting takes longer than ConnectTimeout or, once
// connected, the first response byte takes longer than ResponseTimeout.
// After the first byte only the caller's (stall) bounds apply. Call done
// when the request, body included, is over.
func (c *Client) bounded(ctx context.Context, host string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var mu sync.Mutex
	what := waitConnect
	var timer *time.Timer
	fire := func() {
		mu.Lock()
		defer mu.Unlock()
		if what == "" {
			return
		}
		d := c.opts.ConnectTimeout
		if what == waitResponse {
			d = c.opts.ResponseTimeout
		}
		cancel(&WaitError{What: what, Host: host, D: d})
	}
	mu.Lock()
	timer = time.AfterFunc(c.opts.ConnectTimeout, fire)
	mu.Unlock()
	trace := &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) {
			mu.Lock()
			defer mu.Unlock()
			if what == waitConnect {
				what = waitResponse
				timer.Reset(c.opts.ResponseTimeout)
			}
		},
		GotFirstResponseByte: func() {
			mu.Lock()
			defer mu.Unlock()
			what = ""
			timer.Stop()
		},
	}
	return httptrace.WithClientTrace(ctx, trace), func() {
		mu.Lock()
		what = ""
		timer.Stop()
		mu.Unlock()
		cancel(nil)
	}
}

// hostOf is the host (and port) of URL u, or u itself when it does not parse.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// waitCause is the *WaitError that cancelled ctx, or nil.
func waitCause(ctx context.Context) *WaitError {
	we, _ := context.Cause(ctx).(*WaitError)
	return we
}
