package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kiln/kernels/simd"
)

// TestProbsSameBytesUnderEveryKernelSet: `kiln probs --all-positions` on
// int8-GEMM models prints the same bytes under every kernel set this CPU
// runs (generic, avx2, avxvnni, avx512vnni), as `KILN_KERNELS=avx2 kiln probs` and
// plain `kiln probs` do on an AVX-512 machine.
func TestProbsSameBytesUnderEveryKernelSet(t *testing.T) {
	sets := simd.Impls()
	if !slices.Contains(sets, "avx512vnni") || !slices.Contains(sets, "avxvnni") {
		t.Logf("this CPU runs only %v: the VNNI sets it lacks are not checked here", sets)
	}
	dir := t.TempDir()
	for _, typ := range []string{"Q8_0", "Q4_0", "Q4_K"} {
		path := filepath.Join(dir, typ+".gguf")
		if _, stderr, code := kiln(t, "synth", path, "--arch", "llama", "--dim", "256", "--layers", "2", "--heads", "4",
			"--kv-heads", "2", "--ffn", "512", "--vocab-size", "300", "--type", typ, "--seed", "3"); code != 0 {
			t.Fatalf("synth %s: exit %d: %s", typ, code, stderr)
		}
		prompt := "ids:1,5,9,200,17,33,48,2,250,77,78,79,80,81,82,83,84,85,86,87"
		var first string
		for _, set := range sets {
			prev, err := simd.SetImpl(set)
			if err != nil {
				t.Fatal(err)
			}
			out, stderr, code := kiln(t, "probs", path, prompt, "--all-positions", "--top", "40")
			simd.SetImpl(prev)
			if code != 0 {
				t.Fatalf("%s probs under %s: exit %d: %s", typ, set, code, stderr)
			}
			if set == sets[0] {
				first = out
			} else if out != first {
				t.Fatalf("%s: probs under %s differ from %s:\n%s\nvs\n%s", typ, set, sets[0], out, first)
			}
		}
	}
}

// TestInspectCPU: `kiln inspect --cpu` names the set in use and the ones
// this CPU runs; a KILN_KERNELS value that is not a set (or that the CPU
// cannot run) is refused with exit status 2 by every command.
func TestInspectCPU(t *testing.T) {
	if os.Getenv("KILN_TEST_MAIN") == "1" {
		os.Exit(runMain([]string{"inspect", "--cpu"}, os.Stdout, os.Stderr))
	}
	out, stderr, code := kiln(t, "inspect", "--cpu")
	if code != 0 || !strings.Contains(out, "kernels:       "+simd.Impl()+"\n") || !strings.Contains(out, strings.Join(simd.Impls(), ", ")) {
		t.Fatalf("inspect --cpu: exit %d\n%s%s", code, out, stderr)
	}
	for _, c := range []struct {
		env  string
		code int
		want string
	}{{"bogus", 2, "not a kernel set"}, {"avx2", 0, "kernels:       avx2"}, {"generic", 0, "kernels:       generic"}} {
		if c.env == "avx2" && len(simd.Impls()) < 2 {
			continue
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestInspectCPU$", "-test.count=1")
		cmd.Env = append(os.Environ(), "KILN_TEST_MAIN=1", simd.EnvKernels+"="+c.env)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != c.code || !strings.Contains(o.String()+e.String(), c.want) {
			t.Errorf("%s=%s kiln inspect --cpu: exit %d, want %d with %q\n%s%s", simd.EnvKernels, c.env, got, c.code, c.want, o.String(), e.String())
		}
	}
}
