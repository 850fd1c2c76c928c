package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"kiln/convert"
	"kiln/tokenizer"
)

func init() {
	register("convert", "convert a Hugging Face folder to GGUF (as convert_hf_to_gguf.py, then llama-quantize for --type)", runConvert)
}

func runConvert(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stdout)
	typ := fs.String("type", "", "file type of the output (default: the weights' stored type, F32, F16 or BF16)")
	pure := fs.Bool("pure", false, "give every quantizable tensor the type's base type (no mix rules), as llama-quantize --pure")
	verbose := fs.Bool("v", false, "list every tensor's conversion")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kiln convert DIR OUT.gguf [--type TYPE] [--pure] [-v]\n\nDIR is a Hugging Face folder (config.json, *.safetensors, tokenizer.json).\nTYPE: %s\n\n",
			strings.Join(convert.FileTypeNames(), " "))
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErrorf("want DIR OUT, got %d arguments", len(pos))
	}
	if err := checkOutput(pos[1], nil, []string{pos[0]}); err != nil {
		return err
	}
	opts := convert.Options{}
	auto := *typ == ""
	if !auto {
		ft, err := convert.ParseFileType(*typ)
		if err != nil {
			return usageErrorf("%v", err)
		}
		opts.Scheme = convert.Scheme{FileType: ft, Pure: *pure}
	}
	feed, done := writeProgress(stderr, pos[1])
	opts.Progress = feed
	rep, err := convert.FromHF(pos[0], pos[1], opts, auto)
	if err != nil {
		return err
	}
	done()
	writeReport(stdout, pos[1], convert.Scheme{FileType: rep.FileType, Pure: *pure}, rep, *verbose)
	if v, err := tokenizer.LoadHFTokenizer(pos[0]); err == nil {
		for _, c := range v.GGUFCaveats() {
			fmt.Fprintf(stderr, "kiln convert: note: %s\n", c)
		}
	}
	return nil
}
