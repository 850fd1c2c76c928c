package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"kiln/model"
	"kiln/safetensors"
)

// isDir reports whether arg names a folder (a Hugging Face checkpoint).
func isDir(arg string) bool {
	st, err := os.Stat(arg)
	return err == nil && st.IsDir()
}

// inspectHF describes a Hugging Face folder: config.json's architecture,
// dims and numerics as kiln maps them, and the safetensors tensor types.
func inspectHF(dir string, tensors bool, stdout io.Writer) error {
	set, err := safetensors.OpenDir(dir)
	if err != nil {
		return err
	}
	defer set.Close()
	names := set.Names()
	w := &strings.Builder{}
	fmt.Fprintf(w, "folder:        %s (Hugging Face, %d safetensors files, %d tensors)\n", dir, len(set.Files), len(names))
	cfg, hc, _, cerr := model.ConfigFromHF(dir)
	if len(hc.Architectures) > 0 {
		fmt.Fprintf(w, "architecture:  %s (%s)\n", cfg.Arch, hc.Architectures[0])
	}
	if cerr == nil {
		fmt.Fprintf(w, "dims:          dim %d, %d layers, %d heads, %d KV heads, head dim %d, FFN %d, vocab %d, context %d\n",
			cfg.Dim, cfg.Layers, cfg.Heads, cfg.KVHeads, cfg.HeadDim, cfg.FFN, cfg.Vocab, cfg.Context)
		if cfg.MoE() {
			fmt.Fprintf(w, "experts:       %d, %d used per token, expert FFN %d, weights renormalised %v\n",
				cfg.Experts, cfg.ExpertsUsed, cfg.ExpertFFN, cfg.ExpertNorm)
		}
		if cfg.SharedFFN > 0 {
			fmt.Fprintf(w, "shared expert: FFN %d, sigmoid-gated\n", cfg.SharedFFN)
		}
		fmt.Fprintf(w, "numerics:      rms eps %g, rope base %g, rope freq scale %g, rope %s\n",
			cfg.NormEps, cfg.RopeBase, cfg.RopeFreqScale, map[bool]string{true: "neox", false: "normal (q/k rows permuted at load)"}[cfg.RopeNeox])
		fmt.Fprintf(w, "embeddings:    tied %v\n", cfg.Tied)
	} else {
		fmt.Fprintf(w, "model:         cannot run: %v\n", cerr)
	}
	type agg struct{ n, bytes, elems uint64 }
	byType := map[safetensors.DType]*agg{}
	var total, params, expertBytes, expertParams uint64
	for _, n := range names {
		t, _, _ := set.Tensor(n)
		if model.IsRoutedExpert(n) {
			expertBytes += t.End - t.Begin
			expertParams += t.Elements()
		}
		a := byType[t.DType]
		if a == nil {
			a = &agg{}
			byType[t.DType] = a
		}
		a.n++
		a.bytes += t.End - t.Begin
		a.elems += t.Elements()
		total += t.End - t.Begin
		params += t.Elements()
	}
	types := make([]safetensors.DType, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return byType[types[i]].bytes > byType[types[j]].bytes })
	fmt.Fprintf(w, "parameters:    %.2fM in %.1f MiB (%.2f bits per weight)\n", float64(params)/1e6, float64(total)/(1<<20), float64(total)*8/float64(max(params, 1)))
	if cerr == nil && cfg.MoE() {
		writeActive(w, &cfg, params, expertParams, total, expertBytes)
	}
	for _, t := range types {
		a := byType[t]
		fmt.Fprintf(w, "  %-8s %4d tensors  %10.1f MiB\n", t, a.n, float64(a.bytes)/(1<<20))
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
		fmt.Fprintf(w, "tokenizer:     tokenizer.json present\n")
	} else {
		fmt.Fprintf(w, "tokenizer:     no tokenizer.json\n")
	}
	if tensors {
		fmt.Fprintln(w, "tensors:")
		for _, n := range names {
			t, _, _ := set.Tensor(n)
			fmt.Fprintf(w, "  %-48s %-5s %v\n", n, t.DType, t.Shape)
		}
	}
	_, err = io.WriteString(stdout, w.String())
	return err
}
