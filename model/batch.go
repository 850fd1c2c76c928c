package model

import "fmt"

// Batch is one step's work: the new tokens of several sequences,
// concatenated (see the package comment for the layout).
type Batch struct {
	Tokens      []int32   // [numTokens] all new tokens of all sequences, concatenated
	Positions   []int32   // [numTokens] position of each token in its sequence
	SeqStarts   []int32   // [numSeqs+1] token offsets of each sequence in Tokens
	BlockTables [][]int32 // [numSeqs][numBlocks] physical KV block ids, in order
	ContextLens []int32   // [numSeqs] tokens in KV after this step (last position + 1)
	LogitRows   []int32   // rows of Tokens that need logits, ascending
}

// NumSeqs is the number of sequences in the batch.
func (b *Batch) NumSeqs() int { return len(b.SeqStarts) - 1 }

// Validate checks the batch against the model and cache so that Forward
// never indexes out of range.
func (b *Batch) Validate(c *Config, kv *KVStore) error {
	n := len(b.Tokens)
	switch {
	case n == 0:
		return fmt.Errorf("model: batch has no tokens")
	case len(b.Positions) != n:
		return fmt.Errorf("model: batch has %d tokens but %d positions", n, len(b.Positions))
	case len(b.SeqStarts) < 2 || b.SeqStarts[0] != 0 || int(b.SeqStarts[len(b.SeqStarts)-1]) != n:
		return fmt.Errorf("model: SeqStarts %v must run from 0 to %d", b.SeqStarts, n)
	case len(b.BlockTables) != b.NumSeqs() || len(b.ContextLens) != b.NumSeqs():
		return fmt.Errorf("model: %d sequences but %d block tables and %d context lengths", b.NumSeqs(), len(b.BlockTables), len(b.ContextLens))
	}
	for i, t := range b.Tokens {
		if t < 0 || int(t) >= c.Vocab {
			return fmt.Errorf("model: token %d at row %d is outside the vocabulary [0, %d)", t, i, c.Vocab)
		}
	}
	for s := 0; s < b.NumSeqs(); s++ {
		lo, hi := b.SeqStarts[s], b.SeqStarts[s+1]
		if hi <= lo {
			return fmt.Errorf("model: sequence %d has no tokens (SeqStarts %v)", s, b.SeqStarts)
		}
		ctx := int(b.ContextLens[s])
		if int(b.Positions[hi-1])+1 != ctx {
			return fmt.Errorf("model: sequence %d ends at position %d but its context length is %d", s, b.Positions[hi-1], ctx)
		}
		if ctx > c.Context {
			return fmt.Errorf("model: sequence %d needs %d positions; the model's context is %d", s, ctx, c.Context)
		}
		if need := (ctx + kv.BlockSize - 1) / kv.BlockSize; len(b.BlockTables[s]) < need {
			return fmt.Errorf("model: sequence %d needs %d KV blocks for %d tokens but its block table has %d", s, need, ctx, len(b.BlockTables[s]))
		}
		for _, blk := range b.BlockTables[s] {
			if blk < 0 || int(blk) >= kv.NumBlocks {
				return fmt.Errorf("model: sequence %d uses KV block %d outside the cache's %d blocks", s, blk, kv.NumBlocks)
			}
		}
		for i := lo; i < hi; i++ {
			if b.Positions[i] < 0 || (i > lo && b.Positions[i] != b.Positions[i-1]+1) {
				return fmt.Errorf("model: sequence %d positions must be consecutive and non-negative (row %d has %d)", s, i, b.Positions[i])
			}
		}
	}
	for i, r := range b.LogitRows {
		if r < 0 || int(r) >= n || (i > 0 && r <= b.LogitRows[i-1]) {
			return fmt.Errorf("model: LogitRows %v must be ascending rows in [0, %d)", b.LogitRows, n)
		}
	}
	return nil
}
