package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kiln/chat"
	"kiln/engine"
	"kiln/gguf"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/server"
	"kiln/tokenizer"
)

// tinyPath writes (once per test binary) a small random-weight model with
// a synthetic tokenizer.
var tinyPath = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kiln-server-test")
	if err != nil {
		return "", err
	}
	spec := tinymodel.Spec
	spec.Ctx = 4096
	path := filepath.Join(dir, "tiny.gguf")
	return path, tinymodel.Write(path, spec, "Q8_0", 7)
})

// loader opens GGUF files the way `kiln serve` does, with a small pool.
type loader struct {
	blocks int
	loads  sync.Map // path -> count
	mu     sync.Mutex
	n      int
	cfg    engine.Config
	pool   string // server.Model.Pooling
	tmpl   string // a chat template in place of the model's own ("": its own)
}

func (l *loader) load(ctx context.Context, name, path string) (*server.Model, error) {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := model.Load(f, model.Options{Threads: 2})
	if err != nil {
		f.Close()
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		m.Close()
		f.Close()
		return nil, err
	}
	src := tok.Vocab().ChatTemplate
	if l.tmpl != "" {
		src = l.tmpl
	}
	tmpl, err := chat.Compile(src)
	if err != nil {
		m.Close()
		f.Close()
		return nil, err
	}
	cfg := l.cfg
	cfg.Tokenizer = tok
	if cfg.NumBlocks == 0 {
		cfg.NumBlocks = 512
	}
	if cfg.MaxSeqs == 0 {
		cfg.MaxSeqs = 16
	}
	e, err := engine.New(m, cfg)
	if err != nil {
		m.Close()
		f.Close()
		return nil, err
	}
	maxLen := m.Config.Context
	if cfg.MaxModelLen > 0 {
		maxLen = cfg.MaxModelLen
	}
	return &server.Model{Engine: e, Tokenizer: tok, Template: tmpl, MaxModelLen: maxLen, MaxSeqs: cfg.MaxSeqs,
		BlockSize: 16, NumBlocks: cfg.NumBlocks, PrefixCache: !cfg.NoPrefixCache, CacheDtype: cfg.KVStoreType().String(), Bytes: 1 << 20, Pooling: l.pool,
		Close: func() { m.Close(); f.Close() }}, nil
}

func (l *loader) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// testServer is a kiln server on a loopback port.
type testServer struct {
	*server.Server
	URL    string
	loader *loader
	done   chan error
}

// start serves cfg (Models default: the tiny model as "tiny") on a
// loopback port; the server is shut down when the test ends.
func start(t testing.TB, cfg server.Config, l *loader) *testServer {
	t.Helper()
	path, err := tinyPath()
	if err != nil {
		t.Fatal(err)
	}
	if l == nil {
		l = &loader{}
	}
	if cfg.Models == nil {
		cfg.Models = []server.Source{{Name: "tiny", Path: path}}
	}
	cfg.Load = l.load
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, URL: "http://" + ln.Addr().String(), loader: l, done: make(chan error, 1)}
	go func() { ts.done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		<-ts.done
	})
	return ts
}

// post sends a JSON body and returns the status, headers and body.
func (ts *testServer) post(t testing.TB, path, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func (ts *testServer) get(t testing.TB, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// errorOf decodes OpenAI's error envelope, failing the test if the body
// is not one.
func errorOf(t testing.TB, body []byte) (message, typ string, param, code *string) {
	t.Helper()
	var env struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil || env.Error == nil || env.Error.Message == "" || env.Error.Type == "" {
		t.Fatalf("not an OpenAI error envelope: %s (%v)", body, err)
	}
	return env.Error.Message, env.Error.Type, env.Error.Param, env.Error.Code
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
