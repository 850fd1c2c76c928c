package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"kiln/gguf"
	"kiln/kernels/simd"
	"kiln/model"
)

func init() {
	register("inspect", "describe a GGUF file: architecture, dims, tensor types, vocabulary", runInspect)
}

// writeActive prints a mixture of experts' active parameters and bytes
// per token: all but the unchosen experts' share.
func writeActive(w io.Writer, c *model.Config, params, expertParams, bytes, expertBytes uint64) {
	fmt.Fprintf(w, "active:        %.2fM parameters, %.1f MiB per token (%d of %d experts; the experts hold %.2fM)\n",
		float64(c.Active(params, expertParams))/1e6, float64(c.Active(bytes, expertBytes))/(1<<20), c.ExpertsUsed, c.Experts, float64(expertParams)/1e6)
}

// writeCPU prints the kernel set in use, why, and the sets this CPU runs.
func writeCPU(w io.Writer) {
	fmt.Fprintf(w, "kernels:       %s\n", simd.Impl())
	fmt.Fprintf(w, "why:           %s\n", simd.ImplReason())
	fmt.Fprintf(w, "cpu runs:      %s (select with %s=NAME)\n", strings.Join(simd.Impls(), ", "), simd.EnvKernels)
}

func runInspect(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stdout)
	tensors := fs.Bool("tensors", false, "list every tensor")
	meta := fs.Bool("metadata", false, "list every metadata key")
	cpuInfo := fs.Bool("cpu", false, "say which kernel set runs on this CPU and why (MODEL optional)")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln inspect MODEL [--tensors] [--metadata] [--cpu]\n       kiln inspect --cpu\n")
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if *cpuInfo {
		writeCPU(stdout)
		if len(pos) == 0 {
			return nil
		}
	}
	if len(pos) != 1 {
		return usageErrorf("want one MODEL argument, got %d", len(pos))
	}
	if isDir(pos[0]) {
		return inspectHF(pos[0], *tensors, stdout)
	}
	f, err := openGGUF(pos[0], stderr)
	if err != nil {
		return err
	}
	defer f.Close()

	w := &strings.Builder{}
	name, _ := f.String("general.name")
	fmt.Fprintf(w, "file:          %s (GGUF v%d, %d metadata keys, %d tensors)\n", pos[0], f.Version, len(f.KV), len(f.Tensors))
	if name != "" {
		fmt.Fprintf(w, "name:          %s\n", name)
	}
	arch := f.Architecture()
	fmt.Fprintf(w, "architecture:  %s\n", arch)
	cfg, cfgErr := model.ConfigFromGGUF(f)
	if err := cfgErr; err == nil {
		fmt.Fprintf(w, "dims:          dim %d, %d layers, %d heads, %d KV heads, head dim %d, FFN %d, context %d\n",
			cfg.Dim, cfg.Layers, cfg.Heads, cfg.KVHeads, cfg.HeadDim, cfg.FFN, cfg.Context)
		if cfg.MoE() {
			fmt.Fprintf(w, "experts:       %d, %d used per token, expert FFN %d, weights renormalised %v\n",
				cfg.Experts, cfg.ExpertsUsed, cfg.ExpertFFN, cfg.ExpertNorm)
		}
		if cfg.SharedFFN > 0 {
			fmt.Fprintf(w, "shared expert: FFN %d, sigmoid-gated\n", cfg.SharedFFN)
		}
		fmt.Fprintf(w, "numerics:      rms eps %g, rope base %g, rope freq scale %g, rope %s\n",
			cfg.NormEps, cfg.RopeBase, cfg.RopeFreqScale, map[bool]string{true: "neox", false: "normal"}[cfg.RopeNeox])
		_, hasOut := f.Tensor("output.weight")
		fmt.Fprintf(w, "embeddings:    tied %v\n", !hasOut)
	} else if len(f.Tensors) > 0 {
		fmt.Fprintf(w, "model:         cannot run: %v\n", err)
	}

	// Tensor types by element count and bytes.
	type agg struct {
		n     int
		bytes uint64
		elems uint64
	}
	byType := map[gguf.Type]*agg{}
	var total, params, expertBytes, expertParams uint64
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if model.IsRoutedExpert(t.Name) {
			expertBytes += t.Size
			expertParams += t.Elements()
		}
		a := byType[t.Type]
		if a == nil {
			a = &agg{}
			byType[t.Type] = a
		}
		a.n++
		a.bytes += t.Size
		a.elems += t.Elements()
		total += t.Size
		params += t.Elements()
	}
	if len(f.Tensors) > 0 {
		types := make([]gguf.Type, 0, len(byType))
		for t := range byType {
			types = append(types, t)
		}
		sort.Slice(types, func(i, j int) bool { return byType[types[i]].bytes > byType[types[j]].bytes })
		fmt.Fprintf(w, "parameters:    %.2fM in %.1f MiB (%.2f bits per weight)\n", float64(params)/1e6, float64(total)/(1<<20), float64(total)*8/float64(max(params, 1)))
		if cfgErr == nil && cfg.MoE() {
			writeActive(w, &cfg, params, expertParams, total, expertBytes)
		}
		for _, t := range types {
			a := byType[t]
			fmt.Fprintf(w, "  %-8s %4d tensors  %10.1f MiB\n", t, a.n, float64(a.bytes)/(1<<20))
		}
	}
	if toks, ok := f.Strings("tokenizer.ggml.tokens"); ok {
		tm, _ := f.String("tokenizer.ggml.model")
		pre, _ := f.String("tokenizer.ggml.pre")
		fmt.Fprintf(w, "vocabulary:    %d tokens, tokenizer %q, pre-tokenizer %q\n", len(toks), tm, pre)
	} else {
		fmt.Fprintf(w, "vocabulary:    none in file\n")
	}
	if tmpl, ok := f.String("tokenizer.chat_template"); ok {
		fmt.Fprintf(w, "chat template: present (%d bytes)\n", len(tmpl))
	} else {
		fmt.Fprintf(w, "chat template: absent (kiln run feeds the text raw, as with --raw)\n")
	}
	if *meta {
		fmt.Fprintln(w, "metadata:")
		for _, kv := range f.KV {
			fmt.Fprintf(w, "  %s = %s\n", kv.Key, kv.Value)
		}
	}
	if *tensors {
		fmt.Fprintln(w, "tensors:")
		for _, t := range f.Tensors {
			fmt.Fprintf(w, "  %-32s %-6s %v\n", t.Name, t.Type, t.Shape)
		}
	}
	_, err = io.WriteString(stdout, w.String())
	return err
}
