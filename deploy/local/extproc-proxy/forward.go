package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// netDialer connects to replicas; a replica that does not accept within
// 5 s counts as a connect failure (the next destination is tried).
var netDialer = net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}

// forward sends the request to the first destination in d.dests that
// accepts a connection, as Envoy's original-destination fallback list does,
// and returns its response and address. Only connect failures move on to
// the next destination; any other failure is the answer.
func (x *exchange) forward(d *decision) (*http.Response, string, error) {
	dests, err := parseDestinations(d.dests)
	if err != nil {
		return nil, "", &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the EPP named no usable destination: %v", err)}
	}
	path := d.ps[":path"]
	if !strings.HasPrefix(path, "/") {
		return nil, "", &httpError{http.StatusBadRequest, fmt.Sprintf("bad :path %q", path)}
	}
	var lastErr error
	for i, dst := range dests {
		req, err := http.NewRequestWithContext(x.ctx, d.ps[":method"], "http://"+dst+path, bytes.NewReader(d.body))
		if err != nil {
			return nil, "", &httpError{http.StatusBadRequest, err.Error()}
		}
		req.Header = d.header.Clone()
		req.Host = d.ps[":authority"]
		resp, err := x.p.Upstream.RoundTrip(req)
		if err == nil {
			return resp, dst, nil
		}
		if x.r.Context().Err() != nil {
			return nil, "", errClientGone
		}
		lastErr = err
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" {
			return nil, dst, &httpError{http.StatusBadGateway, fmt.Sprintf("upstream %s: %v", dst, err)}
		}
		x.p.Logf("%s: connect to %s failed (%v); %d destination(s) left", x.reqID, dst, err, len(dests)-1-i)
	}
	return nil, "", &httpError{http.StatusServiceUnavailable, fmt.Sprintf("no destination accepted a connection: %v", lastErr)}
}
