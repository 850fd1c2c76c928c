package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"kiln/internal/testutil"
	"kiln/kernels/simd"
)

// TestUsageErrorsAreOneBehaviour: every bad command line (an unknown flag,
// a bad flag value, an out-of-range count) exits 2 and says so once on
// stderr; -h exits 0 with the usage.
func TestUsageErrorsAreOneBehaviour(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	for _, tc := range []struct {
		args []string
		code int
		msg  string // substring of stderr, said exactly once
	}{
		{[]string{"generate", m, "hi", "--nosuch"}, 2, "flag provided but not defined: -nosuch"},
		{[]string{"probs", m, "hi", "--top", "x"}, 2, "invalid value \"x\" for flag -top"},
		{[]string{"bench", m, "--bogus"}, 2, "not defined: -bogus"},
		{[]string{"generate", m, "hi", "-x"}, 2, "after --"},
		// -n: at most N tokens, -1 for no limit, in every command.
		{[]string{"generate", m, "hi", "-n", "-2"}, 2, "-n -2: want a count of tokens, or -1 for no limit"},
		{[]string{"run", m, "hi", "-n", "-2"}, 2, "-n -2: want a count of tokens, or -1 for no limit"},
		{[]string{"run", m, "hi", "-n", "0"}, 2, "-n 0 asks for an empty answer"},
		// --threads and --parallel are bounded.
		{[]string{"generate", m, "hi", "--threads", "-3"}, 2, "--threads -3: want 0"},
		{[]string{"probs", m, "hi", "--threads", "100000"}, 2, "--threads 100000: want 0"},
		{[]string{"run", m, "hi", "--threads", "100000"}, 2, "--threads 100000: want 0"},
		{[]string{"bench", m, "--threads", "-1"}, 2, "--threads -1: want 0"},
		{[]string{"bench", m, "--parallel", "100000"}, 2, "--parallel 100000: want 1 up to 1024"},
	} {
		_, stderr, code := kilnRun(t, "", tc.args[1:]...)
		if tc.args[0] != "run" {
			_, stderr, code = kiln(t, tc.args...)
		}
		if code != tc.code || strings.Count(stderr, tc.msg) != 1 {
			t.Errorf("kiln %v: exit %d, stderr %q; want exit %d saying %q once", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}

// TestHelpGoesToStdout: help that was asked for (kiln -h, kiln X -h,
// --help) is the answer, on stdout with exit 0; a bare kiln is a usage
// error, on stderr with exit 2.
func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"generate", "-h"}, {"serve", "--help"}, {"quantize", "-h"}, {"run", "-h"}, {"bench", "serve", "-h"}, {"version", "-h"}} {
		out, stderr, code := kiln(t, args...)
		if code != 0 || !strings.Contains(out, "usage: kiln") || stderr != "" {
			t.Errorf("kiln %v: exit %d, stdout %q, stderr %q; want the usage on stdout, exit 0", args, code, out, stderr)
		}
	}
	if out, stderr, code := kiln(t); code != 2 || out != "" || !strings.Contains(stderr, "usage: kiln") {
		t.Errorf("kiln: exit %d, stdout %q, stderr %q; want the usage on stderr, exit 2", code, out, stderr)
	}
	if out, _, _ := kiln(t, "bench", "-h"); !strings.Contains(out, "gap (decode streams") {
		t.Errorf("kiln bench -h does not describe --workload gap:\n%s", out)
	}
}

// TestVersion: kiln version and kiln --version print one line naming the
// Go version and the kernel set.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, stderr, code := kiln(t, args...)
		if code != 0 || !strings.HasPrefix(out, "kiln ") || !strings.Contains(out, runtime.Version()) || !strings.Contains(out, "kernels "+simd.Impl()) || strings.Count(out, "\n") != 1 {
			t.Errorf("kiln %v: exit %d, out %q, err %q", args, code, out, stderr)
		}
	}
	if _, stderr, code := kiln(t, "version", "x"); code != 2 || !strings.Contains(stderr, "takes no arguments") {
		t.Errorf("kiln version x: exit %d, err %q", code, stderr)
	}
}

// TestFlagsAfterDashDashText: -- quotes the one argument after it, and
// flags after that argument are flags again (kiln run M -- "-5 apples"
// -n 5 asks for 5 tokens).
func TestFlagsAfterDashDashText(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	out, stderr, code := kiln(t, "generate", m, "--", "-x", "-n", "3", "--json")
	var got generateOutput
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Tokens) != 3 {
		t.Fatalf("generate M -- -x -n 3 --json: exit %d, out %q, err %s", code, out, stderr)
	}
	// A second -- quotes a second argument.
	if _, stderr, code := kiln(t, "generate", m, "--", "-x", "--", "-y", "-n", "3"); code != 2 || !strings.Contains(stderr, "want MODEL and TEXT") {
		t.Fatalf("two quoted texts: exit %d, err %s", code, stderr)
	}
}

// TestPromptThatBeginsWithDash: "-5 apples" cannot be a flag, -5 names
// none, and after -- anything is text.
func TestPromptThatBeginsWithDash(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	for _, args := range [][]string{
		{"generate", m, "-5 apples", "-n", "2", "--json"},
		{"generate", m, "-n", "2", "-5", "--json"},
		{"generate", m, "-n", "2", "--json", "--", "-n"},
	} {
		out, stderr, code := kiln(t, args...)
		if code != 0 {
			t.Fatalf("kiln %v: exit %d: %s", args, code, stderr)
		}
		var got generateOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Tokens) != 2 {
			t.Fatalf("kiln %v: %s (%v)", args, out, err)
		}
	}
	out, stderr, code := kilnRun(t, "", m, "-5 apples", "-n", "3", "--temperature", "0")
	if code != 0 || out == "" {
		t.Fatalf("kiln run with \"-5 apples\": exit %d, out %q, err %s", code, out, stderr)
	}
}

// TestGenerateMaxTokens: -n 0 generates nothing, -1 goes until the end of
// generation or a full context.
func TestGenerateMaxTokens(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	out, stderr, code := kiln(t, "generate", m, "Once upon a time", "-n", "0", "--json")
	if code != 0 || !strings.Contains(out, `"tokens":[]`) {
		t.Fatalf("-n 0: exit %d, out %s, err %s", code, out, stderr)
	}
	out, stderr, code = kiln(t, "generate", m, "Once upon a time", "-n", "-1", "--json")
	var got generateOutput
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Tokens) < 64 {
		t.Fatalf("-n -1: exit %d, out %.200s, err %s", code, out, stderr)
	}
}

// TestModelWithoutTemplate: inspect and run say the same thing about a
// model without a chat template, and run stops at the end of the story
// (the model's BOS) instead of printing <s> up to a full context.
func TestModelWithoutTemplate(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	out, _, code := kiln(t, "inspect", m)
	if code != 0 || !strings.Contains(out, "chat template: absent (kiln run feeds the text raw") || strings.Contains(out, "ChatML") {
		t.Fatalf("inspect: exit %d:\n%s", code, out)
	}
	for seed := range 5 {
		out, stderr, code := kilnRun(t, "", m, "Once upon a time", "--seed", fmt.Sprint(seed))
		if code != 0 || !strings.Contains(stderr, "fed as raw text") {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
		if strings.Contains(out, "<s>") || len(out) > 4000 {
			t.Errorf("seed %d: %d bytes, with <s>: %v; want one story:\n%s", seed, len(out), strings.Contains(out, "<s>"), out)
		}
	}
}

// TestREADMEDocumentsTheCLI: the README's table names every subcommand and
// every field of tokenize's JSON, and does not promise ids: to kiln run.
func TestREADMEDocumentsTheCLI(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for name := range commands {
		if !strings.Contains(readme, "`kiln "+name) {
			t.Errorf("README does not document kiln %s", name)
		}
	}
	out, _, code := kiln(t, "tokenize", m, "hi")
	var fields map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &fields) != nil {
		t.Fatalf("tokenize: exit %d: %s", code, out)
	}
	_, row, _ := strings.Cut(readme, "| `kiln tokenize")
	row, _, _ = strings.Cut(row, "\n")
	for k := range fields {
		if !strings.Contains(row, `"`+k+`"`) {
			t.Errorf("README's tokenize row lacks the %q field: %s", k, row)
		}
	}
	if strings.Contains(readme, "exactly what CI runs") {
		t.Error("README says its test command is exactly what CI runs")
	}
}
