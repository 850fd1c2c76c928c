package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kiln/internal/testutil"
	"kiln/server"
)

// syncBuffer is a bytes.Buffer safe for the server's log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe runs `kiln serve` on the real TinyStories model: it answers
// llama.cpp's greedy continuation,
// and a SIGTERM (here: its context) drains and returns cleanly.
func TestServe(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	ctx, stop := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	oldSig, oldListen := serveSignals, serveListening
	serveSignals = func() (context.Context, context.CancelFunc) { return ctx, stop }
	serveListening = func(addr string) { addrs <- addr }
	defer func() { serveSignals, serveListening = oldSig, oldListen }()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe([]string{"--model", "stories=" + m, "--port", "0", "--api-key", "k", "--kv-cache-memory", "64MiB"}, io.Discard, &stderr)
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, stderr.String())
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/completions",
		strings.NewReader(`{"model":"stories","prompt":"Once upon a time","max_tokens":32,"temperature":0,"ignore_eos":true}`))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Choices []struct{ Text string } `json:"choices"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	// The oracle's greedy text (TestGenerateStoriesMatchesLlamaCpp).
	want := ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw"
	if len(out.Choices) != 1 || out.Choices[0].Text != want {
		t.Errorf("served %+v, want the text %q", out, want)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v after the signal", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10s of the signal")
	}
	for _, want := range []string{"kiln serve listening", "model loaded", "path=/v1/completions status=200", "stopped"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestServeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "extra"},
		{"serve", "--port", "70000"},
		{"serve", "--max-queue", "0"},
		{"serve", "--log-format", "xml"},
		{"serve", "--memory-budget", "lots"},
		{"serve", "--model", "=x"},
		{"serve", "--spec", "bogus"},
		{"serve", "--api-key", ""},
		{"serve", "--api-key="},
	} {
		if _, stderr, code := kiln(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
	if _, stderr, code := kiln(t, "serve", "--model", "/nonexistent/model.gguf"); code != 1 || !strings.Contains(stderr, "nonexistent") {
		t.Errorf("a missing model file: exit %d (%s)", code, stderr)
	}
}

// serveStart runs `kiln serve args` until it listens or returns: the
// address ("" if it returned), its error, and its log.
func serveStart(t *testing.T, args ...string) (string, error, *syncBuffer) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	addrs := make(chan string, 1)
	oldSig, oldListen := serveSignals, serveListening
	serveSignals = func() (context.Context, context.CancelFunc) { return ctx, stop }
	serveListening = func(addr string) { addrs <- addr }
	t.Cleanup(func() { serveSignals, serveListening = oldSig, oldListen })
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- runServe(append([]string{"--port", "0"}, args...), io.Discard, stderr) }()
	select {
	case addr := <-addrs:
		t.Cleanup(func() { stop(); <-done })
		return addr, nil, stderr
	case err := <-done:
		return "", err, stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("serve %v neither listened nor returned in 20s", args)
	}
	return "", nil, stderr
}

// TestServeRefusesBrokenModel: every --model loads before kiln serve
// listens, so a broken one (bad magic, a folder without config.json, a
// KV budget too small for one sequence) stops it with the cause, instead
// of a server whose /health is 200 and whose every request is a 500.
func TestServeRefusesBrokenModel(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGUX not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--model", bad}, "bad.gguf"},
		{[]string{"--model", tmp}, "config.json"},
		{[]string{"--model", m, "--kv-cache-memory", "1KiB"}, "kv-cache-memory"},
		{[]string{"--model", m, "--max-model-len", "100000"}, "--max-model-len 100000 is more than the model's context of 2048 tokens"},
	} {
		addr, err, log := serveStart(t, tc.args...)
		if addr != "" || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("serve %v: listened at %q, returned %v; want an error mentioning %q\n%s", tc.args, addr, err, tc.msg, log)
		}
	}
}

// TestServeSecondSignal: a second signal while requests drain ends serve
// at once with an error (exit status 1), not after --shutdown-timeout.
func TestServeSecondSignal(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrs := make(chan string, 1)
	again := make(chan os.Signal, 1)
	oldSig, oldListen, oldAgain, oldDrain := serveSignals, serveListening, serveSecondSignal, serveDrain
	serveSignals = func() (context.Context, context.CancelFunc) { return ctx, stop }
	serveListening = func(addr string) { addrs <- addr }
	serveSecondSignal = func() (<-chan os.Signal, func()) { return again, func() {} }
	drainFor := func(srv *server.Server, ctx context.Context) error { // requests that outlast the test
		<-ctx.Done()
		return oldDrain(srv, ctx)
	}
	serveDrain = drainFor
	defer func() {
		serveSignals, serveListening, serveSecondSignal, serveDrain = oldSig, oldListen, oldAgain, oldDrain
	}()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe([]string{"--model", m, "--port", "0", "--shutdown-timeout", "1m", "--kv-cache-memory", "64MiB"}, io.Discard, &stderr)
	}()
	select {
	case <-addrs:
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, stderr.String())
	}
	stop() // the first signal: drain
	time.Sleep(100 * time.Millisecond)
	again <- os.Interrupt
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "second signal") {
			t.Fatalf("serve returned %v after a second signal; want an error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a second signal did not end serve within 10s")
	}
}
