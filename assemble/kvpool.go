package assemble

import (
	"fmt"

	"kiln/internal/memstat"
	"kiln/kernels"
	"kiln/kvcache"
	"kiln/model"
)

// DefaultShare is the fraction of available memory the KV cache takes
// when no budget is given: the weights are memory-mapped and live in the
// page cache that MemAvailable counts as reclaimable, so taking it all
// would evict them.
const DefaultShare = 0.25

// FallbackBudget is the KV budget, in bytes, when the available memory
// cannot be read (not Linux, no /proc).
const FallbackBudget = 2 << 30

// DefaultBudget is the KV budget in bytes when none is given: DefaultShare
// of the system's available memory, or FallbackBudget.
func DefaultBudget() int64 {
	avail, err := memstat.Available()
	if err != nil {
		return FallbackBudget
	}
	return int64(float64(avail) * DefaultShare)
}

// KV sizes the paged KV pool.
type KV struct {
	Budget    int64 // bytes all blocks may take (0: DefaultBudget)
	BlockSize int   // token slots per block
	PerSeq    int   // tokens one sequence needs at most: the budget must hold one such sequence
	Seqs      int   // sequences at once: the pool has no more blocks than Seqs of PerSeq tokens use

	// Blocks > 0 is the pool's size as is: no budget, PerSeq and Seqs
	// unread (a caller that knows its one request's length).
	Blocks int
}

// PoolError is a budget that does not hold one sequence of PerSeq tokens.
type PoolError struct {
	Budget     int64 // bytes
	Tokens     int   // token slots the budget holds
	BlockSize  int   // token slots per block
	BlockBytes int   // bytes one block takes (model and draft)
	Need       int   // tokens a sequence needs (KV.PerSeq)
}

func (e *PoolError) Error() string {
	return fmt.Sprintf("assemble: a KV budget of %d bytes holds %d tokens of this model's KV (%d-token blocks of %d bytes); this run needs at least %d",
		e.Budget, e.Tokens, e.BlockSize, e.BlockBytes, e.Need)
}

// blockBytes is the bytes one block id takes in the KV stores of models
// (the target, and the draft if any: one id holds the KV of both; the
// draft's few scratch blocks are not counted).
func blockBytes(models []*model.Config, blockSize int, typ kernels.KVType) int {
	per := 0
	for _, c := range models {
		per += c.KVBytesPerBlock(blockSize, typ)
	}
	return per
}

// numBlocks is the pool size kv asks for over models: the budget over
// the bytes one block takes (elements of typ), capped at Seqs sequences
// of PerSeq tokens. A model whose heads typ cannot store is an error.
func (kv KV) numBlocks(models []*model.Config, typ kernels.KVType) (int, error) {
	for _, c := range models {
		if err := c.CheckKVType(typ); err != nil {
			return 0, err
		}
	}
	bs := kv.BlockSize
	if bs < 1 {
		return 0, fmt.Errorf("assemble: KV block size %d: want at least 1", bs)
	}
	if kv.Blocks > 0 {
		return kv.Blocks, nil
	}
	budget := kv.Budget
	if budget == 0 {
		budget = DefaultBudget()
	}
	per := blockBytes(models, bs, typ)
	blocksFor := func(tokens int) int { return (tokens + bs - 1) / bs }
	n := kvcache.BlocksForBudget(budget, per)
	if n < blocksFor(kv.PerSeq) {
		return 0, &PoolError{Budget: budget, Tokens: n * bs, BlockSize: bs, BlockBytes: per, Need: kv.PerSeq}
	}
	return min(n, max(1, kv.Seqs)*blocksFor(kv.PerSeq)), nil
}
