package main

import (
	"flag"
	"strings"

	"kiln/assemble"
	"kiln/convert"
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

// checkType refuses --type (scheme) with a MODEL that is not a Hugging
// Face folder: a usage error (kiln serve instead serves GGUF files as
// they are).
func checkType(model string, scheme *convert.Scheme) error {
	if scheme != nil && !assemble.IsHFDir(model) {
		return errTypeOnGGUF(model)
	}
	return nil
}

// errTypeOnGGUF is --type given with a GGUF MODEL.
func errTypeOnGGUF(arg string) error {
	return usageErrorf("--type quantizes a Hugging Face folder on load; %s is not one (for a GGUF: kiln quantize IN.gguf OUT.gguf TYPE)", arg)
}
