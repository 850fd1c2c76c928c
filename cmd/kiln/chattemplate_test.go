package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kiln/internal/testutil"
)

// onceUpon is a chat template file that turns the user's "time" into the
// prompt the llama.cpp oracle continued (storiesGreedy64).
const onceUpon = "Once upon a {{ messages[-1]['content'] }}"

func writeTemplate(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tmpl.jinja")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunChatTemplate: --chat-template FILE renders the conversation with
// the file's template (the stories model has none, so without it the
// prompt is raw, said once); a built-in name works; anything else is a
// usage error.
func TestRunChatTemplate(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	out, stderr, code := kilnRun(t, "", m, "time", "--chat-template", writeTemplate(t, onceUpon), "--temperature", "0", "-n", "64")
	if code != 0 || out != storiesGreedy64+"\n" || strings.Contains(stderr, "no chat template") {
		t.Fatalf("exit %d, stdout %q\nwant %q\nstderr %s", code, out, storiesGreedy64+"\n", stderr)
	}
	if _, stderr, code := kilnRun(t, "", m, "hi", "--chat-template", "chatml", "-n", "2"); code != 0 || strings.Contains(stderr, "no chat template") {
		t.Errorf("--chat-template chatml: exit %d: %s", code, stderr)
	}
	if _, stderr, code := kilnRun(t, "", m, "hi", "-n", "2"); code != 0 || !strings.Contains(stderr, "--chat-template") {
		t.Errorf("no template: exit %d; the note should name --chat-template: %s", code, stderr)
	}
	for _, bad := range []string{"nosuch-template", writeTemplate(t, "{% for %}"), writeTemplate(t, " \n")} {
		if _, stderr, code := kilnRun(t, "", m, "hi", "--chat-template", bad); code != 2 || !strings.Contains(stderr, "--chat-template") {
			t.Errorf("--chat-template %q: exit %d, want 2: %s", bad, code, stderr)
		}
	}
}

// serveForTest runs `kiln serve` with args in-process until the test ends;
// it returns the base URL (once the models are loaded) and the log.
func serveForTest(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	oldSig, oldListen := serveSignals, serveListening
	serveSignals = func() (context.Context, context.CancelFunc) { return ctx, stop }
	serveListening = func(addr string) { addrs <- addr }
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runServe(append([]string{"--port", "0", "--kv-cache-memory", "64MiB"}, args...), io.Discard, stderr)
	}()
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
		serveSignals, serveListening = oldSig, oldListen
	})
	var url string
	select {
	case addr := <-addrs:
		url = "http://" + addr
	case err := <-done:
		done <- err // for the cleanup
		t.Fatalf("serve exited: %v\n%s", err, stderr.String())
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(url + "/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url, stderr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready in 30s:\n%s", stderr.String())
		}
	}
}

// request sends method url with body (JSON) and headers (pairs).
func request(t *testing.T, method, url, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
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
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestServeChatTemplate: a model without a chat template is served with
// ChatML and the log says so at load, naming --chat-template; with
// --chat-template FILE, chat prompts are the file's rendering.
func TestServeChatTemplate(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	tokens := func(url, body string) []int32 {
		_, b := request(t, "POST", url+"/tokenize", body)
		var r struct{ Tokens []int32 }
		if err := json.Unmarshal(b, &r); err != nil || len(r.Tokens) == 0 {
			t.Fatalf("tokenize %s: %s", body, b)
		}
		return r.Tokens
	}
	chatBody := `{"model":"stories","messages":[{"role":"user","content":"time"}]}`
	plain := `{"model":"stories","prompt":"Once upon a time"}`

	url, log := serveForTest(t, "--model", "stories="+m)
	if n := strings.Count(log.String(), "no chat template"); n != 1 || !strings.Contains(log.String(), "ChatML") || !strings.Contains(log.String(), "--chat-template") {
		t.Errorf("the log says %d times that the model has no template (want once, naming ChatML and --chat-template):\n%s", n, log.String())
	}
	chatml := tokens(url, `{"model":"stories","prompt":"<|im_start|>user\ntime<|im_end|>\n<|im_start|>assistant\n"}`)
	if got := tokens(url, chatBody); !slices.Equal(got, chatml) {
		t.Errorf("chat without a template: %v, want ChatML's %v", got, chatml)
	}

	url, log = serveForTest(t, "--model", "stories="+m, "--chat-template", writeTemplate(t, onceUpon))
	if strings.Contains(log.String(), "no chat template") {
		t.Errorf("warned with --chat-template:\n%s", log.String())
	}
	if got, want := tokens(url, chatBody), tokens(url, plain); !slices.Equal(got, want) {
		t.Errorf("chat with --chat-template: %v, want %v", got, want)
	}
}

// TestServeAPIFlags: --max-logprobs, --allowed-origins (JSON or comma
// lists), --allowed-methods/-headers and --allow-credentials reach the
// server; bad values are usage errors.
func TestServeAPIFlags(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	url, _ := serveForTest(t, "--model", "stories="+m, "--max-logprobs", "2",
		"--allowed-origins", `["http://a.example", "http://b.example"]`, "--allowed-methods", "POST", "--allowed-headers", "content-type", "--allow-credentials",
		"--max-grammar-bytes", "100", "--grammar-memory", "1MiB", "--grammar-cache-memory", "1MiB")
	resp, body := request(t, "POST", url+"/v1/completions", `{"model":"stories","prompt":"Once","max_tokens":2,"guided_choice":["`+strings.Repeat("x", 100)+`"]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "--max-grammar-bytes") {
		t.Errorf("choices past --max-grammar-bytes 100: %d %s", resp.StatusCode, body)
	}
	resp, body = request(t, "POST", url+"/v1/completions", `{"model":"stories","prompt":"Once","max_tokens":2,"guided_regex":"(ab{90}){90}"}`)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "more than 1 MiB") {
		t.Errorf("a regex past --grammar-memory 1MiB: %d %s", resp.StatusCode, body)
	}
	resp, body = request(t, "POST", url+"/v1/completions", `{"model":"stories","prompt":"Once","max_tokens":2,"logprobs":3}`)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "--max-logprobs") {
		t.Errorf("logprobs 3 past --max-logprobs 2: %d %s", resp.StatusCode, body)
	}
	resp, _ = request(t, "OPTIONS", url+"/v1/completions", "", "Origin", "http://b.example", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "Content-Type")
	h := resp.Header
	if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "http://b.example" || h.Get("Access-Control-Allow-Methods") != "POST" ||
		h.Get("Access-Control-Allow-Headers") != "content-type" || h.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("preflight: %d %v", resp.StatusCode, h)
	}
	resp, _ = request(t, "GET", url+"/v1/models", "", "Origin", "http://c.example")
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("an origin not listed: %v", resp.Header)
	}

	for _, args := range [][]string{
		{"serve", "--max-logprobs", "21"},
		{"serve", "--max-logprobs", "-1"},
		{"serve", "--allowed-origins", `["http://a", 1]`},
		{"serve", "--chat-template", "nosuch-template"},
		{"serve", "--grammar-memory", "0"},
		{"serve", "--max-grammar-bytes", "lots"},
	} {
		if _, stderr, code := kiln(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}
