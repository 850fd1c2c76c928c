package benchserve

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// PrefixRepetitionDataset returns n requests that share prompt prefixes,
// vLLM's "prefix_repetition" dataset: numPrefixes random prefixes of
// prefixLen token ids; request i is prefix i mod numPrefixes followed by
// its own random suffix of suffixLen ids; the order is shuffled, so
// requests with the same prefix arrive interleaved with the others. Every
// request asks for outLen tokens. A server with a prefix cache computes
// each prefix once.
func PrefixRepetitionDataset(n, prefixLen, suffixLen, numPrefixes, outLen int, ids TokenRange, seed uint64) ([]Request, error) {
	if n < 1 || prefixLen < 1 || suffixLen < 0 || numPrefixes < 1 || outLen < 1 {
		return nil, fmt.Errorf("prefix-repetition dataset: --num-prompts %d, --prefix-len %d, --suffix-len %d, --num-prefixes %d, --output-len %d: want all positive (suffix may be 0)",
			n, prefixLen, suffixLen, numPrefixes, outLen)
	}
	if numPrefixes > n {
		return nil, fmt.Errorf("prefix-repetition dataset: --num-prefixes %d exceeds --num-prompts %d", numPrefixes, n)
	}
	if ids.Hi-ids.Lo < 1 || ids.Lo < 0 {
		return nil, fmt.Errorf("prefix-repetition dataset: empty token id range [%d, %d)", ids.Lo, ids.Hi)
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	prefixes := make([][]int, numPrefixes)
	for i := range prefixes {
		prefixes[i] = ids.draw(rng, prefixLen)
	}
	reqs := make([]Request, n)
	for i := range reqs {
		p := slices.Concat(prefixes[i%numPrefixes], ids.draw(rng, suffixLen))
		reqs[i] = Request{PromptIDs: p, PromptLen: len(p), OutputLen: outLen}
	}
	rng.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return reqs, nil
}
