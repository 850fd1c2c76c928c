package benchserve

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultVocab is the token-id range of random prompts when neither a
// vocabulary size nor a tokenizer is given: ids in [100, 30000) exist in
// every common LLaMA-family vocabulary (32000 and up) and miss the low
// ids where control and byte tokens usually sit.
const DefaultVocab = 30000

// TokenRange is the half-open range [Lo, Hi) that random prompt token ids
// are drawn from, uniformly.
type TokenRange struct{ Lo, Hi int }

// VocabRange returns the id range for a vocabulary of n tokens:
// [min(100, n/4), n). The low ids are skipped because control and byte
// tokens usually sit there; the server may still meet a special id above
// them, which does not matter with ignore_eos.
func VocabRange(n int) (TokenRange, error) {
	if n < 2 {
		return TokenRange{}, fmt.Errorf("vocabulary of %d tokens: want at least 2", n)
	}
	return TokenRange{Lo: min(100, n/4), Hi: n}, nil
}

func (t TokenRange) draw(rng *rand.Rand, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = t.Lo + rng.IntN(t.Hi-t.Lo)
	}
	return ids
}

// lengthRange is [floor(n*(1-ratio)), ceil(n*(1+ratio))], at least 1,
// vLLM's range for --random-range-ratio.
func lengthRange(n int, ratio float64) (int, int) {
	lo := max(int(math.Floor(float64(n)*(1-ratio))), 1)
	hi := max(int(math.Ceil(float64(n)*(1+ratio))), lo)
	return lo, hi
}

// RandomDataset returns n requests of random token ids, vLLM's "random"
// dataset: input and output lengths uniform in [len*(1-ratio),
// len*(1+ratio)] (exactly inLen and outLen when ratio is 0), ids uniform
// in ids. 0 <= ratio < 1.
func RandomDataset(n, inLen, outLen int, ratio float64, ids TokenRange, seed uint64) ([]Request, error) {
	if n < 1 || inLen < 1 || outLen < 1 {
		return nil, fmt.Errorf("random dataset: --num-prompts %d, --random-input-len %d, --random-output-len %d: want all positive", n, inLen, outLen)
	}
	if !(ratio >= 0 && ratio < 1) {
		return nil, fmt.Errorf("random dataset: --random-range-ratio %g: want 0 <= ratio < 1", ratio)
	}
	if ids.Hi-ids.Lo < 1 || ids.Lo < 0 {
		return nil, fmt.Errorf("random dataset: empty token id range [%d, %d)", ids.Lo, ids.Hi)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	inLo, inHi := lengthRange(inLen, ratio)
	outLo, outHi := lengthRange(outLen, ratio)
	reqs := make([]Request, n)
	for i := range reqs {
		in := inLo + rng.IntN(inHi-inLo+1)
		out := outLo + rng.IntN(outHi-outLo+1)
		reqs[i] = Request{PromptIDs: ids.draw(rng, in), PromptLen: in, OutputLen: out}
	}
	return reqs, nil
}
