package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"kiln/assemble"
	"kiln/engine"
	"kiln/gguf"
)

// loadModel resolves o.Model and o.Draft (hf: references are fetched
// into the cache, progress on stderr) and loads them (assemble.Load), with
// assemble's refusals said in the commands' flags (a bad draft is a
// --draft error). o.Scheme quantizes folders alone: the commands of one
// MODEL refuse --type with a GGUF first (checkType).
func loadModel(o assemble.Options, stderr io.Writer) (*assemble.Assembly, error) {
	path, err := resolveModel(o.Model, stderr)
	if err != nil {
		return nil, err
	}
	o.Model = path
	if o.Draft != "" {
		if o.Draft, err = resolveModel(o.Draft, stderr); err != nil {
			return nil, fmt.Errorf("--draft: %w", err)
		}
	}
	a, err := assemble.Load(o)
	return a, flagError(err)
}

// startEngine starts a's engine (assemble.Assembly.Start) with the KV
// pool kv, a budget too small for one sequence being a usage error.
func startEngine(a *assemble.Assembly, kv assemble.KV, cfg engine.Config) (*engine.Engine, error) {
	e, err := a.Start(kv, cfg)
	return e, flagError(err)
}

// flagError says assemble's errors in the flags that caused them: a KV
// budget that does not hold one sequence (--kv-cache-memory, a usage
// error) and a bad draft model (--draft). Others pass as they are.
func flagError(err error) error {
	var pe *assemble.PoolError
	var de *assemble.DraftError
	switch {
	case errors.As(err, &pe):
		return usageErrorf("--kv-cache-memory %s holds %d tokens of this model's KV (%d-token blocks of %d bytes); this run needs at least %d",
			fmtBytes(pe.Budget), pe.Tokens, pe.BlockSize, pe.BlockBytes, pe.Need)
	case errors.As(err, &de):
		return fmt.Errorf("--%w", de)
	}
	return err
}

// openGGUF maps a MODEL argument: a local path, or an hf: reference that
// is fetched into the cache first (progress on stderr).
func openGGUF(arg string, stderr io.Writer) (*gguf.File, error) {
	path, err := resolveModel(arg, stderr)
	if err != nil {
		return nil, err
	}
	return assemble.OpenGGUF(path)
}

// promptTokens turns a command-line prompt into ids the way the llama.cpp
// oracle does: "ids:1,2,3" is taken as is; text is tokenized without
// parsing special tokens and gets BOS in front when the vocabulary asks.
func promptTokens(a *assemble.Assembly, text string) ([]int32, error) {
	if rest, ok := strings.CutPrefix(text, "ids:"); ok {
		return parseIDs(rest, a.Model.Config.Vocab)
	}
	ids := a.Tokenizer.Encode(text, false)
	v := a.Tokenizer.Vocab()
	if v.AddBOS && v.BOS >= 0 && (len(ids) == 0 || ids[0] != v.BOS) {
		ids = append([]int32{v.BOS}, ids...)
	}
	return ids, nil
}

// parseIDs reads "1,2,3"; vocab > 0 bounds the ids.
func parseIDs(s string, vocab int) ([]int32, error) {
	var ids []int32
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 || (vocab > 0 && int(v) >= vocab) {
			return nil, fmt.Errorf("token id %q is not an integer in [0, %d)", f, vocab)
		}
		ids = append(ids, int32(v))
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no token ids after \"ids:\"")
	}
	return ids, nil
}
