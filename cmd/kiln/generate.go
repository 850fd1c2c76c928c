package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
)

func init() {
	register("generate", "greedy-decode a continuation (the llama.cpp oracle's JSON shape)", runGenerate)
}

type generateOutput struct {
	Prompt []int32 `json:"prompt"`
	Tokens []int32 `json:"tokens"`
	Text   string  `json:"text"`
}

func runGenerate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 32, "most tokens to generate, stopping early at end of generation (0: none, -1: up to a full context)")
	temp := fs.Float64("temperature", 0, "sampling temperature; only 0 (greedy) is supported here, use 'kiln run' to sample")
	asJSON := fs.Bool("json", false, "print {\"prompt\",\"tokens\",\"text\"} instead of the text")
	threads := fs.Int("threads", 0, "worker threads (0: one per core)")
	kvF32 := kvTypeFlag(fs)
	fs.Usage = func() {
		io.WriteString(stderr, "usage: kiln generate MODEL TEXT -n N --temperature 0 [--json]\n  TEXT may be ids:1,2,3 (taken as is, no BOS); a TEXT that begins with - goes after --\n")
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErrorf("want MODEL and TEXT, got %d arguments", len(pos))
	}
	if err := checkMaxTokens(*n, true); err != nil {
		return err
	}
	if err := checkThreads(*threads); err != nil {
		return err
	}
	if *temp != 0 {
		return usageErrorf("generate is greedy (--temperature 0); use 'kiln run' for sampling")
	}
	f32, err := kvF32()
	if err != nil {
		return err
	}
	l, err := openModel(pos[0], *threads)
	if err != nil {
		return err
	}
	defer l.Close()
	prompt, err := l.promptTokens(pos[1])
	if err != nil {
		return usageErrorf("%v", err)
	}
	if *n == -1 {
		*n = max(0, l.model.Config.Context-len(prompt))
	}
	total := len(prompt) + *n
	if total > l.model.Config.Context {
		return fmt.Errorf("prompt (%d tokens) plus -n %d exceeds the model's context of %d tokens: shorten the prompt or lower -n", len(prompt), *n, l.model.Config.Context)
	}
	seq, err := newSequence(l.model, total, f32)
	if err != nil {
		return err
	}
	out := generateOutput{Prompt: prompt, Tokens: []int32{}}
	logits, err := seq.feed(prompt, false)
	if err != nil {
		return err
	}
	for len(out.Tokens) < *n {
		next := argmax(logits)
		out.Tokens = append(out.Tokens, next)
		if l.tok.IsEOG(next) || len(out.Tokens) == *n {
			break
		}
		if logits, err = seq.feed([]int32{next}, false); err != nil {
			return err
		}
	}
	out.Text = l.tok.Decode(out.Tokens)
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	_, err = fmt.Fprintln(stdout, out.Text)
	return err
}

// argmax is greedy decoding: the highest logit, ties to the lowest id.
func argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}
