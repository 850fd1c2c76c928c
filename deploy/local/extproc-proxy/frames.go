package main

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// headerMap is h as Envoy sends it to ext_proc: lower-case keys, one entry
// per value, values in raw_value; the pseudo-headers in ps come first (in
// their given order).
func headerMap(ps [][2]string, h http.Header) *corev3.HeaderMap {
	var out []*corev3.HeaderValue
	for _, kv := range ps {
		out = append(out, &corev3.HeaderValue{Key: kv[0], RawValue: []byte(kv[1])})
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable order makes -v logs and tests readable
	for _, k := range keys {
		lk := strings.ToLower(k)
		if hopHeaders[lk] && lk != "content-length" {
			continue
		}
		for _, v := range h[k] {
			out = append(out, &corev3.HeaderValue{Key: lk, RawValue: []byte(v)})
		}
	}
	return &corev3.HeaderMap{Headers: out}
}

// requestHeadersFrame is the first frame of a stream: the client's request
// headers with :method, :path, :authority, :scheme and content-length (when
// known), as Envoy sends them. eos is true when the request has no body.
func requestHeadersFrame(r *http.Request, h http.Header, eos bool) *extproc.ProcessingRequest {
	ps := [][2]string{{":method", r.Method}, {":path", r.URL.RequestURI()}, {":authority", r.Host}, {":scheme", "http"}}
	if r.ContentLength >= 0 {
		ps = append(ps, [2]string{"content-length", strconv.FormatInt(r.ContentLength, 10)})
	}
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extproc.HttpHeaders{Headers: headerMap(ps, h), EndOfStream: eos}}}
}

func requestBodyFrame(b []byte, eos bool) *extproc.ProcessingRequest {
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestBody{
		RequestBody: &extproc.HttpBody{Body: b, EndOfStream: eos}}}
}

// responseHeadersFrame carries the replica's status (:status) and headers.
func responseHeadersFrame(status int, h http.Header) *extproc.ProcessingRequest {
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: &extproc.HttpHeaders{Headers: headerMap([][2]string{{":status", strconv.Itoa(status)}}, h)}}}
}

func responseBodyFrame(b []byte, eos bool) *extproc.ProcessingRequest {
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_ResponseBody{
		ResponseBody: &extproc.HttpBody{Body: b, EndOfStream: eos}}}
}

func responseTrailersFrame(t http.Header) *extproc.ProcessingRequest {
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_ResponseTrailers{
		ResponseTrailers: &extproc.HttpTrailers{Trailers: headerMap(nil, t)}}}
}
