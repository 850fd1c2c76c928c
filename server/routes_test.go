package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"kiln/server"
)

// do sends method path with headers (pairs) and an optional body.
func (ts *testServer) do(t testing.TB, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestBearerSchemeCase: the Authorization scheme is case-insensitive (RFC
// 7235 section 2.1); the key is not.
func TestBearerSchemeCase(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	for auth, want := range map[string]int{
		"Bearer sekrit": 200, "bearer sekrit": 200, "BEARER sekrit": 200, "bEaReR  sekrit ": 200,
		"bearer SEKRIT": 401, "Basic sekrit": 401, "sekrit": 401, "Bearersekrit": 401, "": 401,
	} {
		resp, body := ts.do(t, "GET", "/v1/models", "", "Authorization", auth)
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: status %d, want %d: %s", auth, resp.StatusCode, want, body)
		}
	}
}

// TestMethodNotAllowed: a known path with another method is a 405 naming
// the methods it takes in Allow, in OpenAI's envelope; an unknown path
// stays a 404.
func TestMethodNotAllowed(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	for _, c := range []struct {
		method, path, allow string
	}{
		{"GET", "/v1/chat/completions", "POST"},
		{"GET", "/v1/completions", "POST"},
		{"GET", "/v1/embeddings", "POST"},
		{"DELETE", "/tokenize", "POST"},
		{"POST", "/v1/models", "GET, HEAD"},
		{"PUT", "/health", "GET, HEAD"},
	} {
		resp, body := ts.do(t, c.method, c.path, "")
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: status %d, Allow %q; want 405, %q: %s", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"), c.allow, body)
			continue
		}
		msg, typ, _, code := errorOf(t, body)
		if typ != "invalid_request_error" || code == nil || *code != "method_not_allowed" || !strings.Contains(msg, c.method) {
			t.Errorf("%s %s: envelope %s", c.method, c.path, body)
		}
	}
	if resp, body := ts.do(t, "GET", "/v1/audio/speech", ""); resp.StatusCode != 404 || resp.Header.Get("Allow") != "" {
		t.Errorf("GET /v1/audio/speech: %d, Allow %q: %s", resp.StatusCode, resp.Header.Get("Allow"), body)
	}
}
