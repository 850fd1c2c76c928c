package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// kiln runs the CLI in-process and returns stdout, stderr and the exit code.
func kiln(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestGenerateStoriesMatchesLlamaCpp(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	out, stderr, code := kiln(t, "generate", m, "Once upon a time", "-n", "32", "--temperature", "0", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got generateOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// Recorded with: node shared/oracle/llamacpp.mjs greedy stories260K.gguf "Once upon a time" -n 32
	wantPrompt := []int32{1, 403, 407, 261, 378}
	wantTokens := []int32{432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394}
	wantText := ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw"
	if !equal(got.Prompt, wantPrompt) || !equal(got.Tokens, wantTokens) || got.Text != wantText {
		t.Fatalf("got %+v\nwant prompt %v tokens %v text %q", got, wantPrompt, wantTokens, wantText)
	}
}

func TestProbsAndTokenize(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	out, stderr, code := kiln(t, "tokenize", m, "Once upon a time")
	if code != 0 || strings.TrimSpace(out) != `{"tokens":[403,407,261,378],"bos":1,"eos":2,"add_bos":true}` {
		t.Fatalf("tokenize: exit %d, out %s, err %s", code, out, stderr)
	}
	out, stderr, code = kiln(t, "probs", m, "ids:1,403,407", "--top", "3", "--all-positions")
	if code != 0 {
		t.Fatalf("probs: exit %d: %s", code, stderr)
	}
	var got probsOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Positions) != 3 || got.Positions[0].Pos != 0 || len(got.Positions[2].Top) != 3 {
		t.Fatalf("probs shape: %s", out)
	}
	// The trained model continues "Once" with " upon" (403 -> 407) with high probability.
	if top := got.Positions[1].Top[0]; top[0] != 407 || top[1] < 0.9 {
		t.Fatalf("after [BOS, Once] top token = %v, want 407 with p > 0.9", top)
	}
}

func TestCLIErrors(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"nosuch"}, 2, "unknown command"},
		{[]string{"probs", m}, 2, "want MODEL and TEXT"},
		{[]string{"probs", m, "ids:1,99999"}, 2, "not an integer in [0, 512)"},
		{[]string{"generate", m, "hi", "-n", "5000"}, 1, "exceeds the model's context"},
		{[]string{"generate", m, "hi", "--temperature", "0.5"}, 2, "greedy"},
		{[]string{"inspect", "/nonexistent.gguf"}, 1, "nonexistent"},
	} {
		_, stderr, code := kiln(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("kiln %v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
