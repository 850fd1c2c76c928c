package server_test

import (
	"net/http"
	"strings"
	"testing"

	"kiln/server"
)

// TestCORSOff: by default no response carries a CORS header, preflight or
// not (browsers then keep other origins out).
func TestCORSOff(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	resp, _ := ts.do(t, "OPTIONS", "/v1/chat/completions", "", "Origin", "http://app.example", "Access-Control-Request-Method", "POST")
	resp2, _ := ts.do(t, "GET", "/v1/models", "", "Origin", "http://app.example")
	for _, r := range []*http.Response{resp, resp2} {
		for k := range r.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s: status %d, CORS header %s without AllowedOrigins", r.Request.Method, r.StatusCode, k)
			}
		}
	}
}

// TestCORS: with allowed origins, a preflight is answered 204 before the
// API key is asked for, with the allowed methods and headers; requests
// from an allowed origin carry Access-Control-Allow-Origin (errors too, so
// the page can read them); other origins get nothing and their preflight
// is refused.
func TestCORS(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit", AllowedOrigins: []string{"http://app.example"},
		AllowedMethods: []string{"GET", "POST"}, AllowedHeaders: []string{"Authorization", "Content-Type"}, AllowCredentials: true}, nil)
	pre := func(origin, method, headers string) (int, map[string]string) {
		resp, body := ts.do(t, "OPTIONS", "/v1/chat/completions", "", "Origin", origin, "Access-Control-Request-Method", method,
			"Access-Control-Request-Headers", headers)
		h := map[string]string{}
		for _, k := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
			"Access-Control-Allow-Credentials", "Access-Control-Max-Age"} {
			h[k] = resp.Header.Get(k)
		}
		if resp.StatusCode != 204 {
			errorOf(t, body)
		}
		return resp.StatusCode, h
	}
	status, h := pre("http://app.example", "POST", "authorization, content-type")
	if status != 204 || h["Access-Control-Allow-Origin"] != "http://app.example" || h["Access-Control-Allow-Methods"] != "GET, POST" ||
		h["Access-Control-Allow-Headers"] != "Authorization, Content-Type" || h["Access-Control-Allow-Credentials"] != "true" || h["Access-Control-Max-Age"] == "" {
		t.Errorf("preflight: %d %v", status, h)
	}
	for _, c := range [][3]string{
		{"http://evil.example", "POST", "content-type"},
		{"http://app.example", "DELETE", ""},
		{"http://app.example", "POST", "x-secret"},
	} {
		if status, h := pre(c[0], c[1], c[2]); status != 400 || h["Access-Control-Allow-Origin"] != "" {
			t.Errorf("preflight %v: %d %v, want a 400 without CORS headers", c, status, h)
		}
	}
	// Actual requests: the allowed origin is told it may read, success or 401.
	for _, auth := range []string{"Bearer sekrit", ""} {
		resp, body := ts.do(t, "GET", "/v1/models", "", "Origin", "http://app.example", "Authorization", auth)
		if resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" || resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("GET with Origin, auth %q: %d %v %s", auth, resp.StatusCode, resp.Header, body)
		}
	}
	if resp, _ := ts.do(t, "GET", "/v1/models", "", "Origin", "http://evil.example", "Authorization", "Bearer sekrit"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin told it may read: %v", resp.Header)
	}

	// "*" for everything, no credentials: any origin, the asked headers echoed.
	any := start(t, server.Config{AllowedOrigins: []string{"*"}}, nil)
	resp, body := any.do(t, "OPTIONS", "/v1/completions", "", "Origin", "http://x.example", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type,x-stainless-os")
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Headers") != "content-type,x-stainless-os" ||
		resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight with *: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}
