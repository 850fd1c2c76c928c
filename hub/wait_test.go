package hub

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// silentHost listens on 127.0.0.1, accepts connections and never answers.
// It returns the endpoint URL and how many connections it accepted.
func silentHost(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conns = append(conns, c) // held open, never written to
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String(), &accepted
}

func waitClient(t *testing.T, endpoint string, mod func(*Options)) *Client {
	t.Helper()
	o := Options{Endpoint: endpoint, Home: t.TempDir(), Getenv: noEnv, NoToken: true,
		RetryWait: time.Millisecond, ConnectTimeout: 300 * time.Millisecond, ResponseTimeout: 300 * time.Millisecond}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A host that accepts the connection and never answers fails within the
// first-byte timeout, not StallTimeout times the retries, and says so.
func TestPullSilentHostFailsOnFirstByteTimeout(t *testing.T) {
	for _, ref := range []string{"hf:o/r/m.gguf", "hf:o/r:Q4_K_M"} { // HEAD, and the file listing
		url, accepted := silentHost(t)
		c := waitClient(t, url, nil)
		start := time.Now()
		_, _, err := c.Pull(context.Background(), ref)
		took := time.Since(start)
		var we *WaitError
		if !errors.As(err, &we) || we.What != waitResponse || !strings.Contains(err.Error(), "first-byte timeout") {
			t.Fatalf("%s: err = %v, want a first-byte *WaitError", ref, err)
		}
		if took > 3*time.Second {
			t.Errorf("%s: failed after %v, want about 300ms", ref, took)
		}
		if n := accepted.Load(); n != 1 {
			t.Errorf("%s: %d connections, want 1 (a wait timeout is not retried)", ref, n)
		}
	}
}

// A connection that does not come up fails within the connect timeout,
// and the error says it was the connect timeout.
func TestPullConnectTimeout(t *testing.T) {
	var dials atomic.Int32
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		dials.Add(1)
		<-ctx.Done() // a SYN that is never answered
		return nil, ctx.Err()
	}}}
	c := waitClient(t, "http://hub.invalid", func(o *Options) { o.HTTPClient = hc })
	start := time.Now()
	_, _, err := c.Pull(context.Background(), "hf:o/r/m.gguf")
	var we *WaitError
	if !errors.As(err, &we) || we.What != waitConnect || !strings.Contains(err.Error(), "connect timeout") {
		t.Fatalf("err = %v, want a connect *WaitError", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("failed after %v, want about 300ms", took)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d dials, want 1", n)
	}
}

// A download whose response started is bounded by StallTimeout, not by the
// first-byte timeout: a slow body is fine as long as bytes keep coming.
func TestWaitBoundsEndAtFirstByte(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		time.Sleep(500 * time.Millisecond) // longer than ResponseTimeout
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	c := waitClient(t, "http://"+ln.Addr().String(), nil)
	ctx, done := c.bounded(context.Background(), "x")
	defer done()
	req, _ := newRequest(ctx, http.MethodGet, "http://"+ln.Addr().String()+"/")
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 8)
	n, err := resp.Body.Read(buf)
	if string(buf[:n]) != "ok" {
		t.Fatalf("body read %q, %v: the first-byte timeout cut a running response", buf[:n], err)
	}
}
