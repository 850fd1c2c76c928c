package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"

	"kiln/assemble"
	"kiln/engine"
	"kiln/kernels"
)

func init() {
	register("probs", "print next-token probabilities (the llama.cpp oracle's JSON shape)", runProbs)
}

// probsOutput is the oracle's shape: {"prompt":[...],"positions":[{"pos":N,"top":[[id,prob],...]}]}.
type probsOutput struct {
	Prompt    []int32       `json:"prompt"`
	Positions []probsAtStep `json:"positions"`
}

type probsAtStep struct {
	Pos int          `json:"pos"`
	Top [][2]float64 `json:"top"` // [id, probability], most probable first
}

func runProbs(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("probs", flag.ContinueOnError)
	fs.SetOutput(stdout)
	top := fs.Int("top", 20, "how many of the most probable next tokens to print")
	all := fs.Bool("all-positions", false, "print the distribution after every prompt position, not just the last")
	threads := fs.Int("threads", 0, "worker threads (0: one per core)")
	lt := loadTypeFlags(fs)
	kvTypeOf := kvTypeFlag(fs)
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln probs MODEL TEXT [--top 20] [--all-positions] [--type T [--pure]]\n  TEXT may be ids:1,2,3 (taken as is, no BOS); a TEXT that begins with - goes after -- (which quotes only the next argument)\n")
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErrorf("want MODEL and TEXT, got %d arguments", len(pos))
	}
	if err := checkThreads(*threads); err != nil {
		return err
	}
	if *top <= 0 {
		return usageErrorf("--top must be positive")
	}
	kvType, err := kvTypeOf()
	if err != nil {
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
	a, err := loadModel(assemble.Options{Model: pos[0], Scheme: scheme, Threads: *threads}, stderr)
	end()
	if err != nil {
		return err
	}
	defer a.Close()
	prompt, err := promptTokens(a, pos[1])
	if err != nil {
		return usageErrorf("%v", err)
	}
	rows := 1
	if *all {
		rows = len(prompt)
	}
	logits, err := promptLogits(a, prompt, rows, kvType)
	if err != nil {
		return err
	}
	vocab := a.Model.Config.Vocab
	out := probsOutput{Prompt: prompt}
	first := len(prompt) - 1
	if *all {
		first = 0
	}
	for p := first; p < len(prompt); p++ {
		row := logits[(p-first)*vocab : (p-first+1)*vocab]
		out.Positions = append(out.Positions, probsAtStep{Pos: p, Top: topProbs(row, *top)})
	}
	return json.NewEncoder(stdout).Encode(out)
}

// probsChunk is how many prompt tokens one forward takes: the engine's
// step budget, so that each chunk's weights are read once.
const probsChunk = 256

// promptLogits runs prompt through an engine over a's model as one
// request that asks for the raw logit rows of its last rows positions
// ([rows][Vocab]), in steps of probsChunk tokens, and samples one token
// (which nothing reads).
func promptLogits(a *assemble.Assembly, prompt []int32, rows int, kvType kernels.KVType) ([]float32, error) {
	if n := len(prompt); n > a.Model.Config.Context {
		return nil, fmt.Errorf("%d tokens exceed the model's context of %d", n, a.Model.Config.Context)
	}
	// The prompt and the one sampled token, in 16-token blocks: no budget.
	const blockSize = 16
	e, err := a.Start(assemble.KV{Blocks: (len(prompt) + blockSize) / blockSize, BlockSize: blockSize},
		engine.Config{KVType: kvType, MaxSeqs: 1, MaxBatchedTokens: probsChunk})
	if err != nil {
		return nil, err
	}
	ch, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: greedyParams(1), PromptLogits: rows})
	if err != nil {
		return nil, err
	}
	var logits []float32
	for ev := range ch {
		if ev.PromptLogits != nil {
			logits = ev.PromptLogits
		}
		if ev.Done && ev.Reason == engine.Abort {
			return nil, ev.Err
		}
	}
	if logits == nil {
		return nil, fmt.Errorf("the engine returned no prompt logits")
	}
	return logits, nil
}

// topProbs returns the k most probable tokens of softmax(logits), computed
// in float64, most probable first (ties by lower id).
func topProbs(logits []float32, k int) [][2]float64 {
	maxL := math.Inf(-1)
	for _, v := range logits {
		maxL = math.Max(maxL, float64(v))
	}
	sum := 0.0
	for _, v := range logits {
		sum += math.Exp(float64(v) - maxL)
	}
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	k = min(k, len(idx))
	out := make([][2]float64, k)
	for i := 0; i < k; i++ {
		out[i] = [2]float64{float64(idx[i]), math.Exp(float64(logits[idx[i]])-maxL) / sum}
	}
	return out
}
