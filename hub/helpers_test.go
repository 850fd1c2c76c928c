package hub

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"kiln/hub/hubtest"
)

// blob is n deterministic pseudo-random bytes.
func blob(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x6b696c6e))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// noEnv is an empty environment: tests never see the developer's HF_TOKEN.
func noEnv(string) string { return "" }

// testClient talks to s with a fresh cache, fast retries and no token.
func testClient(t *testing.T, s *hubtest.Server, mod func(*Options)) *Client {
	t.Helper()
	o := Options{
		Endpoint:     s.URL(),
		Home:         t.TempDir(),
		Getenv:       noEnv,
		NoToken:      true,
		RetryWait:    time.Millisecond,
		StallTimeout: 5 * time.Second,
	}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkFile fails unless path holds want.
func checkContent(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, differs from the %d served", path, len(got), len(want))
	}
}

// count returns how many requests match.
func count(reqs []hubtest.Request, match func(hubtest.Request) bool) int {
	n := 0
	for _, r := range reqs {
		if match(r) {
			n++
		}
	}
	return n
}
