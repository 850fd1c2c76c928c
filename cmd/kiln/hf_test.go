package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// TestHFFolderCommands: generate, probs, tokenize and bench take a Hugging
// Face folder as MODEL. On tinystories-656k, greedy generation from BOS
// gives the model package's golden (checked there against a float64
// reference and the GGUF path), and tokenize gives the ids of the Hugging
// Face tokenizers library (tokenizer/testdata/hf, made by
// scripts/hf-tokenizer-goldens.js).
func TestHFFolderCommands(t *testing.T) {
	dir := testutil.SharedModel(t, "tinystories-656k")
	out, stderr, code := kiln(t, "generate", dir, "ids:1", "-n", "16", "--json")
	if code != 0 {
		t.Fatalf("generate: exit %d: %s", code, stderr)
	}
	var g generateOutput
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	// The first 16 ids of model's tinyStoriesGolden.
	want := []int32{147, 201, 282, 215, 286, 598, 1662, 356, 499, 826, 1363, 1145, 1652, 615, 242, 1482}
	if !slices.Equal(g.Tokens, want) || !strings.HasPrefix(g.Text, "Once upon a time") {
		t.Fatalf("generate from BOS: %v %q, want %v", g.Tokens, g.Text, want)
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
		if c.Text == "" || strings.HasPrefix(c.Text, "-") {
			continue
		}
		out, stderr, code := kiln(t, "tokenize", dir, c.Text)
		if code != 0 {
			t.Fatalf("tokenize %q: exit %d: %s", c.Text, code, stderr)
		}
		var got struct {
			Tokens []int32 `json:"tokens"`
			BOS    int32   `json:"bos"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Tokens, c.IDs) || got.BOS != 1 {
			t.Fatalf("tokenize %q: %v (bos %d), Hugging Face %v (bos 1)", c.Text, got.Tokens, got.BOS, c.IDs)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d golden strings checked", checked)
	}

	if _, stderr, code := kiln(t, "probs", dir, "Once upon a time", "--top", "3"); code != 0 {
		t.Fatalf("probs: exit %d: %s", code, stderr)
	}
	out, stderr, code = kiln(t, "bench", dir, "--prompt", "8", "--gen", "4", "--json")
	if code != 0 || !strings.Contains(out, `"model_bytes"`) {
		t.Fatalf("bench: exit %d: %s%s", code, out, stderr)
	}
}
