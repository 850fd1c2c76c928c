package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedUpToDate fails when the committed gemm_amd64.s differs from
// what the generator writes (run go generate ./kernels/simd).
func TestGeneratedUpToDate(t *testing.T) {
	have, err := os.ReadFile("../../gemm_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, Generate()) {
		t.Fatal("kernels/simd/gemm_amd64.s is stale: run go generate ./kernels/simd")
	}
	have, err = os.ReadFile("../../gemmvnni_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, GenerateVNNI()) {
		t.Fatal("kernels/simd/gemmvnni_amd64.s is stale: run go generate ./kernels/simd")
	}
	have, err = os.ReadFile("../../attn_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, GenerateAttn()) {
		t.Fatal("kernels/simd/attn_amd64.s is stale: run go generate ./kernels/simd")
	}
}
