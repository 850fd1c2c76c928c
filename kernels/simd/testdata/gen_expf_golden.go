//go:build ignore

// gen_expf_golden rewrites expf_golden.txt (TestExpGolden's reference) from
// llama.cpp's compiled code and glibc, so the golden can be re-made and
// checked rather than trusted:
//
//	KILN_GGML_LIB=DIR go run kernels/simd/testdata/gen_expf_golden.go [-fresh]
//
// DIR holds libggml-base.so and libggml-cpu-haswell.so: node-llama-cpp's
// prebuilt CPU backend (the oracle's; `npm pack @node-llama-cpp/linux-x64@3.21.1`
// and unpack: package/bins/linux-x64), the AVX2+FMA build whose roundings
// kiln follows. gcc compiles a small C program that calls glibc's expf and
// ggml's exported ggml_vec_soft_max_f32 (with max 0 it stores
// ggml_v_expf(x), 8 lanes at a time) and ggml_vec_silu_f32 (ggml_v_silu).
//
// By default the inputs are the first column of the current file, so a
// re-run on the same libraries reproduces it byte for byte (checked:
// identical with glibc 2.36 and node-llama-cpp 3.21.1's haswell library).
// -fresh draws new inputs: specials, uniform in [-110,110], [-20,20] and
// [-250,250], and random finite bit patterns, from a fixed seed.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const harness = `
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
double ggml_vec_soft_max_f32(const int n, float *y, const float *x, float max);
void ggml_vec_silu_f32(const int n, float *y, const float *x);
static uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
int main(void) {
    size_t cap = 1024, n = 0; float *x = malloc(cap * sizeof *x); unsigned u;
    while (scanf("%x", &u) == 1) { if (n == cap) x = realloc(x, (cap *= 2) * sizeof *x); memcpy(&x[n++], &u, 4); }
    if (n % 8) { fprintf(stderr, "%zu inputs: need a multiple of 8 (ggml's AVX2 loops take 8 at a time)\n", n); return 1; }
    float *e = malloc(n * sizeof *e), *s = malloc(n * sizeof *s);
    ggml_vec_soft_max_f32((int)n, e, x, 0.0f);
    ggml_vec_silu_f32((int)n, s, x);
    for (size_t i = 0; i < n; i++) printf("%08x %08x %08x %08x\n", bits(x[i]), bits(expf(x[i])), bits(e[i]), bits(s[i]));
    return 0;
}
`

const header = `# x, glibc expf(x), ggml_v_expf(x), ggml_v_silu(x): float32 bits in hex, one input per line.
# Generated on x86-64 (AVX2, FMA) by a C program calling glibc 2.36 expf and llama.cpp's
# ggml_v_expf / ggml_v_silu (ggml/src/ggml-cpu/vec.h at 80fb11a), gcc -O2 -mavx2 -mfma;
# inputs: specials, uniform in [-110,110], [-20,20], [-250,250], random finite bit patterns.
`

func main() {
	fresh := flag.Bool("fresh", false, "draw new inputs instead of reusing the current file's")
	flag.Parse()
	lib := os.Getenv("KILN_GGML_LIB")
	if lib == "" {
		fail("set KILN_GGML_LIB to the folder holding libggml-base.so and libggml-cpu-haswell.so")
	}
	golden := filepath.Join("kernels", "simd", "testdata", "expf_golden.txt")
	var inputs []string
	if *fresh {
		inputs = freshInputs()
	} else {
		inputs = currentInputs(golden)
	}
	dir, err := os.MkdirTemp("", "expf-golden")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(dir)
	src, bin := filepath.Join(dir, "h.c"), filepath.Join(dir, "h")
	if err := os.WriteFile(src, []byte(harness), 0o644); err != nil {
		fail(err.Error())
	}
	cc := exec.Command("gcc", "-O2", "-o", bin, src, "-L"+lib, "-l:libggml-cpu-haswell.so", "-l:libggml-base.so", "-Wl,-rpath,"+lib, "-lm")
	if out, err := cc.CombinedOutput(); err != nil {
		fail(fmt.Sprintf("gcc: %v\n%s", err, out))
	}
	run := exec.Command(bin)
	run.Stdin = strings.NewReader(strings.Join(inputs, "\n") + "\n")
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, os.Stderr
	if err := run.Run(); err != nil {
		fail(err.Error())
	}
	if err := os.WriteFile(golden, append([]byte(header), out.Bytes()...), 0o644); err != nil {
		fail(err.Error())
	}
	fmt.Printf("wrote %s: %d inputs\n", golden, len(inputs))
}

func currentInputs(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		fail(err.Error())
	}
	defer f.Close()
	var xs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			xs = append(xs, strings.Fields(line)[0])
		}
	}
	return xs
}

// freshInputs draws 1024 inputs (a multiple of 8): the specials first.
func freshInputs() []string {
	var xs []float32
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 88.3762626647949, 88.72, -87.33654, -103.97, -104,
		88.8, -150, 150, math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, 1e-8, -1e-8, 126 * math.Ln2, -126 * math.Ln2, 192 * math.Ln2, -192 * math.Ln2} {
		xs = append(xs, float32(v))
	}
	r := rand.New(rand.NewPCG(21, 1))
	for len(xs) < 1024 {
		switch len(xs) % 4 {
		case 0:
			xs = append(xs, float32(r.Float64()*220-110))
		case 1:
			xs = append(xs, float32(r.Float64()*40-20))
		case 2:
			xs = append(xs, float32(r.Float64()*500-250))
		default:
			for {
				f := math.Float32frombits(r.Uint32())
				if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
					xs = append(xs, f)
					break
				}
			}
		}
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%08x", math.Float32bits(x))
	}
	return out
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gen_expf_golden:", msg)
	os.Exit(1)
}
