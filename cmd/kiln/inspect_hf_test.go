package main

import (
	"strings"
	"testing"

	"kiln/internal/testutil"
)

func TestInspectHFFolder(t *testing.T) {
	dir := testutil.SharedModel(t, "tinystories-656k")
	out, stderr, code := kiln(t, "inspect", dir, "--tensors")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Log(out)
	for _, want := range []string{
		"Hugging Face, 1 safetensors files, 20 tensors",
		"architecture:  llama (LlamaForCausalLM)",
		"dims:          dim 128, 2 layers, 8 heads, 4 KV heads, head dim 16, FFN 384, vocab 2048",
		"embeddings:    tied true",
		"  F32        20 tensors",
		"model.layers.1.self_attn.k_proj.weight           F32   [64 128]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q", want)
		}
	}
}
