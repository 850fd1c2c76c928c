package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"kiln/convert"
	"kiln/gguf"
)

func init() {
	register("quantize", "convert a GGUF's tensors to another type (as llama-quantize)", runQuantize)
}

func runQuantize(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	fs.SetOutput(stdout)
	pure := fs.Bool("pure", false, "give every quantizable tensor the type's base type (no mix rules), as llama-quantize --pure")
	requant := fs.Bool("allow-requantize", false, "allow quantized input tensors to be quantized again (loses precision)")
	verbose := fs.Bool("v", false, "list every tensor's conversion")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kiln quantize IN.gguf OUT.gguf TYPE [--pure] [--allow-requantize] [-v]\n\nTYPE: %s\n(as llama-quantize: Q4_K means Q4_K_M, Q5_K means Q5_K_M; Q4_0 and friends keep output.weight in Q6_K unless --pure)\n\n",
			strings.Join(convert.FileTypeNames(), " "))
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return usageErrorf("want IN OUT TYPE, got %d arguments", len(pos))
	}
	ft, err := convert.ParseFileType(pos[2])
	if err != nil {
		return usageErrorf("%v", err)
	}
	if err := checkOutput(pos[1], []string{pos[0]}, nil); err != nil {
		return err
	}
	feed, done := writeProgress(stderr, pos[1])
	rep, err := convert.Convert(pos[0], pos[1], convert.Options{
		Scheme:          convert.Scheme{FileType: ft, Pure: *pure},
		AllowRequantize: *requant,
		Progress:        feed,
	})
	if err != nil {
		return err
	}
	done()
	writeReport(stdout, pos[1], convert.Scheme{FileType: ft, Pure: *pure}, rep, *verbose)
	return nil
}

// writeReport prints a conversion's summary line (and with verbose every
// tensor's conversion first), for quantize and convert.
func writeReport(w io.Writer, out string, scheme convert.Scheme, rep *convert.Report, verbose bool) {
	counts := map[gguf.Type]int{}
	for _, t := range rep.Tensors {
		counts[t.To]++
		if verbose {
			fmt.Fprintf(w, "%-36s %-16s %6s -> %-6s %10d bytes\n", t.Name, fmt.Sprint(t.Shape), t.From, t.To, t.Bytes)
		}
	}
	var parts []string
	for t, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, t))
	}
	slices.Sort(parts)
	fmt.Fprintf(w, "wrote %s: %s, %d tensors (%s), tensor data %.2f MiB -> %.2f MiB\n",
		out, scheme, len(rep.Tensors), strings.Join(parts, ", "),
		float64(rep.BytesIn)/(1<<20), float64(rep.BytesOut)/(1<<20))
}
