package chatloop

// LM is one sequence of a language model over its own KV cache: the only
// thing the chat loop needs from a model. cmd/kiln adapts model.Model;
// chattest.LM is a scripted fake.
type LM interface {
	// Feed appends tokens after the Len() tokens already in the cache and
	// returns the logits of the token after the last one ([Vocab()]; valid
	// until the next Feed). len(tokens) > 0 and Len()+len(tokens) <= Cap().
	Feed(tokens []int32) ([]float32, error)
	// Len is the number of tokens in the cache.
	Len() int
	// Cap is the most tokens the cache can hold.
	Cap() int
	// Truncate forgets all but the first n tokens (0 <= n <= Len()); the
	// next Feed continues at position n.
	Truncate(n int)
	// Vocab is the length of a logit row.
	Vocab() int
}
