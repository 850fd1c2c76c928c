package main

import (
	"encoding/json"
	"flag"
	"io"

	"kiln/assemble"
	"kiln/gguf"
	"kiln/tokenizer"
)

func init() {
	register("tokenize", "print the token ids of a text (no BOS added)", runTokenize)
}

func runTokenize(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	fs.SetOutput(stdout)
	noSpecial := fs.Bool("no-special", false, "treat special-token text such as <|im_start|> as plain text")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln tokenize MODEL TEXT [--no-special]\n")
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErrorf("want MODEL and TEXT, got %d arguments", len(pos))
	}
	var tok *tokenizer.Tokenizer
	if assemble.IsHFDir(pos[0]) {
		tok, err = assemble.HFTokenizer(pos[0])
	} else {
		var f *gguf.File
		if f, err = openGGUF(pos[0], stderr); err != nil {
			return err
		}
		defer f.Close()
		tok, err = tokenizer.FromGGUF(f)
	}
	if err != nil {
		return err
	}
	v := tok.Vocab()
	ids := tok.Encode(pos[1], !*noSpecial)
	if ids == nil {
		ids = []int32{}
	}
	return json.NewEncoder(stdout).Encode(struct {
		Tokens []int32 `json:"tokens"`
		BOS    int32   `json:"bos"`
		EOS    int32   `json:"eos"`
		AddBOS bool    `json:"add_bos"`
	}{ids, v.BOS, v.EOS, v.AddBOS})
}
