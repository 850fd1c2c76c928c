package main

import (
	"flag"
	"strings"

	"kiln/convert"
	"kiln/model"
)

// loadType is the quantize-on-load flags (--type, --pure) of the commands
// that take a MODEL (run, generate, probs, bench): a Hugging Face folder is
// converted in memory as `kiln convert DIR OUT.gguf --type T [--pure]`
// would write it (convert.LoadHF), so the model computes what it computes
// on that GGUF.
type loadType struct {
	typ  *string
	pure *bool
}

func loadTypeFlags(fs *flag.FlagSet) *loadType {
	return &loadType{
		typ: fs.String("type", "", "quantize a Hugging Face folder MODEL on load to this file type, as kiln convert --type: "+
			strings.Join(convert.FileTypeNames(), " ")),
		pure: fs.Bool("pure", false, "with --type: every quantizable tensor of the type's base type (no mix rules)"),
	}
}

// scheme returns the asked-for scheme, nil without --type.
func (l *loadType) scheme() (*convert.Scheme, error) {
	if *l.typ == "" {
		if *l.pure {
			return nil, usageErrorf("--pure needs --type")
		}
		return nil, nil
	}
	ft, err := convert.ParseFileType(*l.typ)
	if err != nil {
		return nil, usageErrorf("--type: %v", err)
	}
	return &convert.Scheme{FileType: ft, Pure: *l.pure}, nil
}

// loadHF loads a Hugging Face folder, quantized on load when scheme is set;
// bytes is the weights' size in memory (the converted tensors) when
// quantized, else 0.
func loadHF(dir string, scheme *convert.Scheme, opts model.Options) (m *model.Model, bytes uint64, err error) {
	if scheme == nil {
		m, err = model.LoadHF(dir, opts)
		return m, 0, err
	}
	m, rep, err := convert.LoadHF(dir, convert.Options{Scheme: *scheme}, opts)
	if err != nil {
		return nil, 0, err
	}
	for _, t := range rep.Tensors {
		bytes += t.Bytes
	}
	return m, bytes, nil
}

// errTypeOnGGUF is --type given with a GGUF MODEL.
func errTypeOnGGUF(arg string) error {
	return usageErrorf("--type quantizes a Hugging Face folder on load; %s is not one (for a GGUF: kiln quantize IN.gguf OUT.gguf TYPE)", arg)
}
