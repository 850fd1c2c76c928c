package main

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kiln/benchserve/fakeserver"
	"kiln/internal/testutil"
)

// TestBenchServeSweep: a concurrency sweep against the fake writes one
// table per run and a summary, a JSON array of vLLM-named results, and a
// well-formed SVG.
func TestBenchServeSweep(t *testing.T) {
	s := fakeserver.New(30*time.Millisecond, 2*time.Millisecond)
	defer s.Close()
	dir := t.TempDir()
	res, svg := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.svg")
	out, stderr, code := kiln(t, "bench", "serve", "--base-url", s.URL, "--model", "m", "--num-prompts", "6",
		"--random-input-len", "8", "--random-output-len", "4", "--max-concurrency", "1,3",
		"--result-file", res, "--chart", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range s.Problems() {
		t.Error("fake server:", p)
	}
	if n := strings.Count(out, "Serving Benchmark Result"); n != 2 || !strings.Contains(out, "Sweep Summary") {
		t.Fatalf("%d result blocks:\n%s", n, out)
	}
	if s.Requests() != 13 || s.MaxInFlight() != 3 { // a test request, then 6 per run
		t.Errorf("server saw %d requests, %d at most in flight; want 13 and 3", s.Requests(), s.MaxInFlight())
	}
	b, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	var runs []map[string]any
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatalf("a sweep's result file is not an array: %v", err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d results, want 2", len(runs))
	}
	for i, want := range []float64{1, 3} {
		r := runs[i]
		if r["max_concurrency"] != want || r["completed"] != 6.0 || r["failed"] != 0.0 || r["total_output_tokens"] != 24.0 ||
			r["total_input_tokens"] != 48.0 || r["request_rate"] != "inf" || r["model_id"] != "m" || r["backend"] != "openai" {
			t.Errorf("run %d: %v", i, r)
		}
		for _, k := range []string{"mean_ttft_ms", "median_tpot_ms", "p99_itl_ms", "std_e2el_ms", "ttfts", "itls", "output_lens", "errors"} {
			if _, ok := r[k]; !ok {
				t.Errorf("run %d: no %s", i, k)
			}
		}
	}
	checkSVG(t, svg)
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s is not well-formed: %v", path, err)
		}
	}
}

// TestBenchServeSingleRun: one run with Poisson arrivals, the model asked
// of the server, the API key from the environment; the result file is one
// object.
func TestBenchServeSingleRun(t *testing.T) {
	s := fakeserver.New(time.Millisecond, time.Millisecond)
	defer s.Close()
	s.APIKey = "sk-env"
	t.Setenv("KILN_API_KEY", "sk-env")
	dir := t.TempDir()
	res, svg := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.svg")
	out, stderr, code := kiln(t, "bench", "serve", "--base-url", s.URL+"/", "--num-prompts", "5", "--request-rate", "200",
		"--dataset", "prefix-repetition", "--prefix-len", "6", "--suffix-len", "2", "--num-prefixes", "2", "--output-len", "3",
		"--result-file", res, "--chart", svg, "--no-test-request")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "model: fake-model") || !strings.Contains(out, "Request rate configured (RPS):           200.00") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}
	var r map[string]any
	b, _ := os.ReadFile(res)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("a single run's result is not an object: %v", err)
	}
	if r["model_id"] != "fake-model" || r["request_rate"] != 200.0 || r["max_concurrency"] != nil || r["completed"] != 5.0 ||
		r["dataset"] != "prefix-repetition" || r["total_input_tokens"] != 40.0 {
		t.Errorf("result %v", r)
	}
	if s.Requests() != 5 {
		t.Errorf("%d requests with --no-test-request, want 5", s.Requests())
	}
	checkSVG(t, svg)

	// Without the key, every request fails: the run says so and exits 1.
	t.Setenv("KILN_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	_, stderr, code = kiln(t, "bench", "serve", "--base-url", s.URL, "--model", "m", "--num-prompts", "2", "--no-test-request")
	if code != 1 || !strings.Contains(stderr, "HTTP 401: authentication_error: Invalid API Key") || !strings.Contains(stderr, "every request of a run failed") {
		t.Errorf("no key: exit %d: %s", code, stderr)
	}
	// The test request catches it first when not skipped.
	_, stderr, code = kiln(t, "bench", "serve", "--base-url", s.URL, "--model", "m", "--num-prompts", "2")
	if code != 1 || !strings.Contains(stderr, "test request to "+s.URL+"/v1/completions failed: HTTP 401") {
		t.Errorf("test request: exit %d: %s", code, stderr)
	}
}

// TestBenchServeShareGPTChat: text prompts from a ShareGPT file through the
// chat endpoint; input lengths come from the server's usage.
func TestBenchServeShareGPTChat(t *testing.T) {
	s := fakeserver.New(time.Millisecond, time.Millisecond)
	defer s.Close()
	dir := t.TempDir()
	data := filepath.Join(dir, "sg.json")
	os.WriteFile(data, []byte(`[{"conversations":[{"from":"human","value":"Tell me about the moon and stars."},{"from":"gpt","value":"The moon is bright tonight and the stars are out."}]},
		{"conversations":[{"from":"human","value":"Why is the sky blue in the day?"},{"from":"gpt","value":"Because air scatters blue light more than red light."}]}]`), 0o644)
	res := filepath.Join(dir, "r.json")
	_, stderr, code := kiln(t, "bench", "serve", "--base-url", s.URL, "--model", "m", "--endpoint", "/v1/chat/completions",
		"--dataset", "sharegpt", "--dataset-path", data, "--num-prompts", "2", "--result-file", res)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range s.Problems() {
		t.Error("fake server:", p)
	}
	var r map[string]any
	b, _ := os.ReadFile(res)
	json.Unmarshal(b, &r)
	if r["backend"] != "openai-chat" || r["completed"] != 2.0 || r["total_output_tokens"] != 12.0+13.0 || r["output_tokens_source"] != "usage" {
		t.Errorf("result %v", r)
	}
}

// TestBenchServeTokenizerVocab: --tokenizer reads the vocabulary size, and
// random ids stay inside it.
func TestBenchServeTokenizerVocab(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	s := fakeserver.New(0, 0)
	defer s.Close()
	_, stderr, code := kiln(t, "bench", "serve", "--base-url", s.URL, "--model", "m", "--tokenizer", m,
		"--num-prompts", "4", "--random-input-len", "200", "--random-output-len", "1", "--no-test-request")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	prompts := s.Prompts()
	if len(prompts) != 4 {
		t.Fatalf("%d prompts", len(prompts))
	}
	for _, p := range prompts {
		for _, id := range p {
			if id < 100 || id >= 512 { // stories260K has 512 tokens
				t.Fatalf("token id %d outside [100, 512)", id)
			}
		}
	}
}

func TestBenchServeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--max-concurrency", "1,x"}, `--max-concurrency "1,x": want positive counts`},
		{[]string{"--max-concurrency", "0"}, `--max-concurrency "0"`},
		{[]string{"--request-rate", "-1"}, `--request-rate "-1"`},
		{[]string{"--request-rate", "NaN"}, `--request-rate "NaN"`},
		{[]string{"--dataset", "nope"}, `--dataset "nope": want random, prefix-repetition or sharegpt`},
		{[]string{"--prefix-len", "5"}, "--prefix-len does not apply to --dataset random"},
		{[]string{"--dataset", "sharegpt"}, "--dataset sharegpt needs --dataset-path"},
		{[]string{"--dataset", "sharegpt", "--dataset-path", "x", "--vocab", "9"}, "--vocab does not apply to --dataset sharegpt"},
		{[]string{"--endpoint", "/v1/chat/completions"}, "sends token-id prompts, which only /v1/completions accepts"},
		{[]string{"--vocab", "1"}, "--vocab 1: want at least 2"},
		{[]string{"--vocab", "100", "--tokenizer", "x.gguf"}, "give --vocab or --tokenizer, not both"},
		{[]string{"--num-prompts", "0"}, `--num-prompts "0"`},
		{[]string{"--random-range-ratio", "1"}, "--random-range-ratio 1: want 0 <= ratio < 1"},
		{[]string{"--metric-percentiles", "99,101"}, "--metric-percentiles"},
		{[]string{"--base-url", "localhost:8080"}, `--base-url "localhost:8080"`},
		{[]string{"--temperature", "-1"}, "--temperature -1"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--bogus"}, "not defined: -bogus"},
	} {
		_, stderr, code := kiln(t, append([]string{"bench", "serve"}, tc.args...)...)
		if code != 2 || strings.Count(stderr, tc.msg) != 1 {
			t.Errorf("bench serve %v: exit %d, stderr %q; want exit 2 saying %q once", tc.args, code, stderr, tc.msg)
		}
	}
	if out, _, code := kiln(t, "bench", "serve", "-h"); code != 0 || !strings.Contains(out, "usage: kiln bench serve") {
		t.Errorf("-h: exit %d: %s", code, out) // help asked for goes to stdout
	}
	// Not a usage error: the server is not there.
	s := fakeserver.New(0, 0)
	url := s.URL
	s.Close()
	if _, stderr, code := kiln(t, "bench", "serve", "--base-url", url); code != 1 || !strings.Contains(stderr, "list models") {
		t.Errorf("no server: exit %d: %s", code, stderr)
	}
}

func TestParseNumPrompts(t *testing.T) {
	for _, c := range []struct {
		s    string
		runs int
		want []int
		ok   bool
	}{
		{"100", 3, []int{100, 100, 100}, true},
		{"8,16,48", 3, []int{8, 16, 48}, true},
		{"8,16", 3, nil, false},
		{"0", 1, nil, false},
		{"x", 1, nil, false},
	} {
		got, err := parseNumPrompts(c.s, c.runs)
		if (err == nil) != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("parseNumPrompts(%q, %d) = %v, %v", c.s, c.runs, got, err)
		}
	}
}
