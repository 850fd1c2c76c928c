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

// TestHFFolderTypeOnLoad: --type on a folder MODEL quantizes it on load
// exactly as kiln convert --type writes it: probs (all positions) and
// generate print the same on the folder with --type as on the converted
// GGUF; bench reports the quantized size; --type on a GGUF, an unknown
// type and --pure alone are usage errors.
func TestHFFolderTypeOnLoad(t *testing.T) {
	dir := testutil.SharedModel(t, "tinystories-656k")
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := kiln(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return out
	}
	for _, typ := range [][]string{{"Q4_0"}, {"Q8_0", "--pure"}} {
		gguf := filepath.Join(t.TempDir(), "ts.gguf")
		run(append([]string{"convert", dir, gguf, "--type"}, typ...)...)
		onLoad := append([]string{"--type"}, typ...)
		a := run(append([]string{"probs", dir, "Once upon a time there was", "--all-positions", "--top", "5"}, onLoad...)...)
		if b := run("probs", gguf, "Once upon a time there was", "--all-positions", "--top", "5"); a != b {
			t.Errorf("--type %v: probs on the folder\n%s\non the converted GGUF\n%s", typ, a, b)
		}
		a = run(append([]string{"generate", dir, "ids:1", "-n", "24", "--json"}, onLoad...)...)
		if b := run("generate", gguf, "ids:1", "-n", "24", "--json"); a != b {
			t.Errorf("--type %v: generate on the folder %s, on the converted GGUF %s", typ, a, b)
		}
	}
	f32 := run("probs", dir, "Once upon a time", "--top", "5")
	if q := run("probs", dir, "Once upon a time", "--top", "5", "--type", "Q4_0"); q == f32 {
		t.Errorf("--type Q4_0 changed nothing: %s", q)
	}
	var full, quant struct {
		ModelBytes uint64 `json:"model_bytes"`
	}
	for _, b := range []struct {
		dst *struct {
			ModelBytes uint64 `json:"model_bytes"`
		}
		args []string
	}{{&full, nil}, {&quant, []string{"--type", "Q8_0"}}} {
		out := run(append([]string{"bench", dir, "--prompt", "8", "--gen", "4", "--json"}, b.args...)...)
		if err := json.Unmarshal([]byte(out), b.dst); err != nil {
			t.Fatalf("bench: %v: %s", err, out)
		}
	}
	// F32 to Q8_0: 34 bytes per 32 weights instead of 128, norms stay F32.
	if quant.ModelBytes == 0 || quant.ModelBytes*3 > full.ModelBytes {
		t.Errorf("bench model_bytes: folder %d, --type Q8_0 %d", full.ModelBytes, quant.ModelBytes)
	}
	stories := testutil.SharedModel(t, "stories260K.gguf")
	for _, args := range [][]string{
		{"probs", stories, "hi", "--type", "Q8_0"},
		{"generate", dir, "hi", "--type", "Q9_9"},
		{"bench", dir, "--pure"},
	} {
		if _, stderr, code := kiln(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage): %s", args, code, stderr)
		}
	}
}

// TestSynthFormatHF: kiln synth --format hf writes a folder that the other
// commands take as MODEL; probs on it equal probs on the GGUF synth writes
// with the same spec and seed, and --json records the folder's digest.
func TestSynthFormatHF(t *testing.T) {
	tmp := t.TempDir()
	dir, file := filepath.Join(tmp, "hf"), filepath.Join(tmp, "m.gguf")
	args := []string{"--arch", "qwen3", "--dim", "64", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--head-dim", "32",
		"--ffn", "128", "--vocab-size", "320", "--type", "BF16", "--seed", "5", "--json"}
	out, stderr, code := kiln(t, append([]string{"synth", "--format", "hf", dir}, args...)...)
	if code != 0 {
		t.Fatalf("synth --format hf: exit %d: %s", code, stderr)
	}
	var rec struct {
		Format string `json:"format"`
		Bytes  int64  `json:"bytes"`
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.Format != "hf" || rec.Bytes == 0 || len(rec.SHA256) != 64 {
		t.Fatalf("record %s: %v", out, err)
	}
	if _, stderr, code := kiln(t, append([]string{"synth", file}, args...)...); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, stderr)
	}
	a, stderr, code := kiln(t, "probs", dir, "ids:1,5,77,300", "--all-positions")
	if code != 0 {
		t.Fatalf("probs on the folder: exit %d: %s", code, stderr)
	}
	if b, _, _ := kiln(t, "probs", file, "ids:1,5,77,300", "--all-positions"); a != b {
		t.Errorf("probs: folder\n%s\nGGUF\n%s", a, b)
	}
	if _, stderr, code := kiln(t, "synth", "--format", "hf", filepath.Join(tmp, "q"), "--shape", "stories15m", "--type", "Q8_0"); code == 0 || !strings.Contains(stderr, "F32, F16 or BF16") {
		t.Errorf("synth --format hf --type Q8_0: exit %d: %s", code, stderr)
	}
	if _, _, code := kiln(t, "synth", "--format", "safetensors", filepath.Join(tmp, "x")); code != 2 {
		t.Errorf("--format safetensors: exit %d, want 2", code)
	}
}

// TestSynthHFLlama2Convert: a folder with Llama 2's vocabulary (synth
// --format hf --vocab the llama-spm GGUF: tokenizer.json merges made from
// SentencePiece scores, several per piece) goes through kiln convert; the
// folder, its GGUF and synth's own GGUF tokenize alike and give the same
// distributions.
func TestSynthHFLlama2Convert(t *testing.T) {
	vocab := testutil.SharedModel(t, "llamacpp-vocab/ggml-vocab-llama-spm.gguf")
	tmp := t.TempDir()
	dir, conv, file := filepath.Join(tmp, "hf"), filepath.Join(tmp, "conv.gguf"), filepath.Join(tmp, "synth.gguf")
	spec := []string{"--arch", "llama", "--dim", "64", "--layers", "2", "--heads", "4", "--ffn", "128", "--vocab", vocab, "--type", "F16", "--seed", "3"}
	for _, args := range [][]string{
		append([]string{"synth", "--format", "hf", dir}, spec...),
		append([]string{"synth", file}, spec...),
		{"convert", dir, conv},
	} {
		if _, stderr, code := kiln(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args[:3], code, stderr)
		}
	}
	for _, args := range [][]string{
		{"tokenize", "", " Hello world, this is 🦙.cpp\n\tand <s> more"},
		{"probs", "", "Hello world", "--top", "5", "--all-positions"},
	} {
		var outs []string
		for _, m := range []string{dir, conv, file} {
			args[1] = m
			out, stderr, code := kiln(t, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
			outs = append(outs, out)
		}
		if outs[0] != outs[1] || outs[0] != outs[2] {
			t.Errorf("%s: folder %s\nconverted %s\nsynth GGUF %s", args[0], outs[0], outs[1], outs[2])
		}
	}
}
