package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"kiln/assemble"
	"kiln/engine"
	"kiln/sample"
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
	fs.SetOutput(stdout)
	n := fs.Int("n", 32, "most tokens to generate, stopping early at end of generation (0: none, -1: up to a full context)")
	temp := fs.Float64("temperature", 0, "sampling temperature; only 0 (greedy) is supported here, use 'kiln run' to sample")
	asJSON := fs.Bool("json", false, "print {\"prompt\",\"tokens\",\"text\"} instead of the text")
	threads := fs.Int("threads", 0, "worker threads (0: one per core)")
	lt := loadTypeFlags(fs)
	kvTypeOf := kvTypeFlag(fs)
	kvf := addKVPoolFlags(fs)
	sf := addSpecFlags(fs)
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln generate MODEL TEXT -n N --temperature 0 [--json] [--type T [--pure]] [--kv-cache-memory SIZE] [--block-size 16] [--spec ngram|draft [--draft MODEL] --num-speculative-tokens K]\n  TEXT may be ids:1,2,3 (taken as is, no BOS); a TEXT that begins with - goes after -- (which quotes only the next argument)\n")
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
	kvType, err := kvTypeOf()
	if err != nil {
		return err
	}
	if err := kvf.check(); err != nil {
		return err
	}
	if err := sf.check(); err != nil {
		return err
	}
	scheme, err := lt.scheme()
	if err != nil {
		return err
	}
	if err := checkType(pos[0], scheme); err != nil {
		return err
	}
	end := loadNotice(stderr, pos[0])
	a, err := loadModel(assemble.Options{Model: pos[0], Scheme: scheme, Draft: sf.draftPath(), Threads: *threads}, stderr)
	end()
	if err != nil {
		return err
	}
	defer a.Close()
	prompt, err := promptTokens(a, pos[1])
	if err != nil {
		return usageErrorf("%v", err)
	}
	ctxLen := a.Model.Config.Context
	if *n == -1 {
		*n = max(0, ctxLen-len(prompt))
	}
	total := len(prompt) + *n
	if total > ctxLen {
		return fmt.Errorf("prompt (%d tokens) plus -n %d exceeds the model's context of %d tokens: shorten the prompt or lower -n", len(prompt), *n, ctxLen)
	}
	e, err := startEngine(a, kvf.kv(total, 1), engine.Config{KVType: kvType, MaxSeqs: 1, Spec: sf.resolved, Tokenizer: a.Tokenizer})
	if err != nil {
		return err
	}
	out := generateOutput{Prompt: prompt, Tokens: []int32{}}
	if *n > 0 {
		if out.Tokens, err = engineGreedy(e, prompt, *n); err != nil {
			return err
		}
	}
	out.Text = a.Tokenizer.Decode(out.Tokens)
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	_, err = fmt.Fprintln(stdout, out.Text)
	return err
}

// engineGreedy runs one greedy request of at most n tokens through e
// and returns its tokens, an end-of-generation token included.
func engineGreedy(e *engine.Engine, prompt []int32, n int) ([]int32, error) {
	ch, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: greedyParams(n)})
	if err != nil {
		return nil, err
	}
	tokens := []int32{}
	for ev := range ch {
		if ev.Token >= 0 {
			tokens = append(tokens, ev.Token)
		}
		if ev.Done && ev.Reason == engine.Abort {
			return nil, fmt.Errorf("generation aborted: %v", ev.Err)
		}
	}
	return tokens, nil
}

// greedyParams asks for the argmax, at most n tokens (0: until the context
// or the pool is full).
func greedyParams(n int) sample.Params {
	return sample.Params{Temperature: 0, TopP: 1, RepetitionPenalty: 1, MaxTokens: n}
}
