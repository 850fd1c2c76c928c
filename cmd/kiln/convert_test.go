package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// TestConvertCommand: kiln convert writes tinystories-656k as GGUF; greedy
// generation on it equals generation on the folder, and tokenize on it
// equals tokenize on the folder (the tokenizers library's ids) for every
// golden string except the two kinds tokenizer.Vocab.AsSPM documents as
// beyond a llama.cpp vocab: characters outside the vocab (no byte tokens)
// and added-token text.
func TestConvertCommand(t *testing.T) {
	dir := testutil.SharedModel(t, "tinystories-656k")
	out := filepath.Join(t.TempDir(), "ts.gguf")
	if stdout, stderr, code := kiln(t, "convert", dir, out); code != 0 || !strings.Contains(stdout, "F32, 20 tensors") {
		t.Fatalf("convert: exit %d: %s%s", code, stdout, stderr)
	}
	run := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := kiln(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	if a, b := run("generate", dir, "Once upon a time", "-n", "32", "--json"), run("generate", out, "Once upon a time", "-n", "32", "--json"); a != b {
		t.Fatalf("generate: folder %s GGUF %s", a, b)
	}

	raw, err := os.ReadFile("../../tokenizer/testdata/hf/tinystories-656k.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []struct {
			Text string  `json:"text"`
			IDs  []int32 `json:"ids"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range golden.Cases {
		if c.Text == "" || strings.HasPrefix(c.Text, "-") || strings.Contains(c.Text, "<|") || slices.Contains(c.IDs, 0) {
			continue
		}
		if a, b := run("tokenize", dir, c.Text), run("tokenize", out, c.Text); a != b {
			t.Errorf("tokenize %q: folder %s GGUF %s", c.Text, a, b)
		}
		checked++
	}
	if checked < 40 {
		t.Fatalf("only %d golden strings checked", checked)
	}
}
