package kvcache

// EventKind says what an Event reports.
type EventKind uint8

const (
	// BlockStored: a full block entered the hash index (its KV is now
	// findable by prefix lookups).
	BlockStored EventKind = iota + 1
	// BlockRemoved: a block left the hash index (evicted for reuse, or
	// about to be overwritten past a truncation).
	BlockRemoved
	// AllBlocksCleared: the whole hash index was emptied (ResetPrefixCache).
	AllBlocksCleared
)

func (k EventKind) String() string {
	switch k {
	case BlockStored:
		return "BlockStored"
	case BlockRemoved:
		return "BlockRemoved"
	case AllBlocksCleared:
		return "AllBlocksCleared"
	}
	return "EventKind(?)"
}

// Event is one change of the prefix-cache hash index, as an observer set
// with SetObserver sees it: the source of llm-d's KV-cache events (package
// kvevents). Events arrive in the order the index changes, so replaying
// them reproduces the index's set of hashes exactly.
type Event struct {
	Kind EventKind
	// Hash is the block's chain hash (BlockStored, BlockRemoved): kiln's
	// FNV-1a chain (hash.go), an opaque key for consumers.
	Hash uint64
	// Parent is the chain hash of the block before it (BlockStored) when
	// HasParent; a sequence's first block has none (Parent 0).
	Parent    uint64
	HasParent bool
	// Tokens are the block's BlockSize token ids (BlockStored). The slice
	// is the pool's own copy: read-only, and the observer must copy it to
	// keep it past the call.
	Tokens []int32
}

// SetObserver makes the pool call f, synchronously and on the goroutine
// that owns the pool, for every change of its hash index; nil stops it.
// Without an observer the pool does no event work at all (no
// allocations). f must not call back into the pool.
func (p *Pool) SetObserver(f func(Event)) { p.observer = f }

// ResetPrefixCache empties the hash index (all cached blocks become plain
// free blocks) and reports AllBlocksCleared, as vLLM's reset_prefix_cache
// does, e.g. after new weights are loaded. Like vLLM's, it refuses (false)
// while any sequence holds blocks, since their shared blocks could not be
// told apart from private ones afterwards.
func (p *Pool) ResetPrefixCache() bool {
	if len(p.seqs) > 0 {
		return false
	}
	for b := range p.blocks {
		if p.blocks[b].indexed {
			p.blocks[b].indexed, p.blocks[b].tokens = false, nil
		}
	}
	clear(p.index)
	for _, list := range p.partials {
		for _, b := range list {
			p.blocks[b].partial, p.blocks[b].part = false, p.blocks[b].part[:0]
		}
	}
	clear(p.partials)
	if p.observer != nil {
		p.observer(Event{Kind: AllBlocksCleared})
	}
	return true
}
