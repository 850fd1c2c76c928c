package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
)

// copyFile copies src to dst (a test's own copy of a shared model, which
// a command that goes wrong may then destroy).
func copyFile(t *testing.T, src, dst string) []byte {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestOutputMustNotReplaceInput: quantize, convert and synth refuse (exit
// 2, naming the clash) an OUT that is their input, a link to it, or a
// file the conversion reads in the input folder, and leave it as it was.
func TestOutputMustNotReplaceInput(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "m.gguf")
	orig := copyFile(t, testutil.SharedModel(t, "stories260K.gguf"), in)
	link := filepath.Join(tmp, "link.gguf")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	hf := filepath.Join(tmp, "hf")
	if err := os.Mkdir(hf, 0o755); err != nil {
		t.Fatal(err)
	}
	src := testutil.SharedModel(t, "tinystories-656k")
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		copyFile(t, filepath.Join(src, name), filepath.Join(hf, name))
	}
	weights, _ := os.ReadFile(filepath.Join(hf, "model.safetensors"))
	config, _ := os.ReadFile(filepath.Join(hf, "config.json"))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"quantize", in, in, "Q8_0"}, "is the input"},
		{[]string{"quantize", in, link, "Q8_0"}, "is the input"},
		{[]string{"convert", hf, filepath.Join(hf, "model.safetensors")}, "would replace model.safetensors in the input folder"},
		{[]string{"convert", hf, filepath.Join(hf, "config.json")}, "would replace config.json"},
		{[]string{"synth", in, "--shape", "stories15m", "--vocab", in}, "is the input"},
	} {
		_, stderr, code := kiln(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("kiln %v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, stderr, tc.msg)
		}
	}
	if got, _ := os.ReadFile(in); !bytes.Equal(got, orig) {
		t.Errorf("the input GGUF changed")
	}
	if got, _ := os.ReadFile(filepath.Join(hf, "model.safetensors")); !bytes.Equal(got, weights) {
		t.Errorf("the folder's model.safetensors changed")
	}
	if got, _ := os.ReadFile(filepath.Join(hf, "config.json")); !bytes.Equal(got, config) {
		t.Errorf("the folder's config.json changed")
	}
	// A new file beside the input, or in the folder, is fine.
	if _, stderr, code := kiln(t, "quantize", in, filepath.Join(tmp, "f16.gguf"), "F16"); code != 0 {
		t.Errorf("quantize to a new file: exit %d: %s", code, stderr)
	}
	if _, stderr, code := kiln(t, "convert", hf, filepath.Join(hf, "model.gguf")); code != 0 {
		t.Errorf("convert into the folder under a new name: exit %d: %s", code, stderr)
	}
}

// TestQuantizeNoTensors: a GGUF without tensors is an error, not an empty
// output and exit 0.
func TestQuantizeNoTensors(t *testing.T) {
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "empty.gguf"), filepath.Join(tmp, "out.gguf")
	w := gguf.NewWriter()
	w.Add("general.architecture", gguf.StringValue("llama"))
	w.Add("llama.block_count", gguf.Uint32Value(1))
	if err := w.WriteFile(in); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := kiln(t, "quantize", in, out, "Q8_0")
	if code != 1 || !strings.Contains(stderr, "no tensors") {
		t.Fatalf("exit %d, stderr %q; want exit 1 saying the model has no tensors", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
}
