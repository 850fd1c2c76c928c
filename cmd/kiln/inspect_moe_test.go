package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectBenchMoE: for a qwen2moe model (8 experts, 2 used, a shared
// expert) as a GGUF and as synth's HF folder, kiln inspect shows the
// experts and the active parameters per token (all but 6/8 of the routed
// experts' 2*8*3*64*32 = 98304 weights); kiln bench counts the active
// bytes of a step, not the whole file.
func TestInspectBenchMoE(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--arch", "qwen2moe", "--dim", "64", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ffn", "128",
		"--experts", "8", "--experts-used", "2", "--expert-ffn", "32", "--shared-ffn", "48", "--vocab-size", "300", "--type", "F16"}
	g, h := filepath.Join(dir, "moe.gguf"), filepath.Join(dir, "moe-hf")
	for _, a := range [][]string{append([]string{"synth", g}, args...), append([]string{"synth", "--format", "hf", h}, args...)} {
		if _, stderr, code := kiln(t, a...); code != 0 {
			t.Fatalf("%v: exit %d: %s", a, code, stderr)
		}
	}
	// 181,440 weights: embedding and output 2*300*64, per layer attention
	// 2*64*64 + 2*64*32 + biases 64+32+32, norms 2*64, router 8*64,
	// experts 98304/2, shared expert 3*64*48 + gate 64; final norm 64.
	// Active: 181,440 - 98304*6/8 = 107,712.
	for _, m := range []string{g, h} {
		out, stderr, code := kiln(t, "inspect", m)
		if code != 0 {
			t.Fatalf("inspect %s: exit %d: %s", m, code, stderr)
		}
		for _, want := range []string{
			"experts:       8, 2 used per token, expert FFN 32, weights renormalised false",
			"shared expert: FFN 48, sigmoid-gated",
			"parameters:    0.18M",
			"active:        0.11M parameters, 0.2 MiB per token (2 of 8 experts; the experts hold 0.10M)",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("inspect %s lacks %q:\n%s", m, want, out)
			}
		}
	}
	out, stderr, code := kiln(t, "bench", g, "--prompt", "8", "--gen", "4", "--threads", "1", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	// F16 experts: 98304 weights, 196,608 bytes; one token reads 2 of 8.
	if want := r.ModelBytes - 196608*6/8; r.StepBytes != want {
		t.Errorf("bench step_bytes = %d, want model_bytes %d less 6/8 of the experts' 196608 = %d", r.StepBytes, r.ModelBytes, want)
	}
	out, stderr, code = kiln(t, "bench", g, "--prompt", "8", "--gen", "4", "--threads", "1")
	if code != 0 || !strings.Contains(out, "GB/s of weights active, ") || !strings.Contains(out, "2 of 8 experts per token") {
		t.Errorf("bench table: exit %d\n%s%s", code, out, stderr)
	}
}
