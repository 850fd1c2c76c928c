package kvcache

import (
	"fmt"
	"slices"
)

// Copy is one block copy the caller must apply to the KV store (every
// layer's keys and values of block Src into block Dst) before the forward
// that writes the step's tokens: the copy in copy-on-write.
type Copy struct{ Src, Dst int32 }

// Alloc is what Allocate did besides growing the block table.
type Alloc struct {
	Cached int    // tokens of a new sequence served from the prefix cache (its KV is already there, or copied by Copies: whole blocks, then part of a partial block)
	Copies []Copy // copy-on-write copies to apply before the forward
}

// block is the bookkeeping of one block id.
type block struct {
	ref     int32 // number of block tables holding this block
	indexed bool  // in the hash index: full, and its contents are hash's tokens
	partial bool  // on the partial list (partial.go): its first len(part) slots hold part's tokens
	inFree  bool  // on the free list (ref == 0)
	hash    uint64
	parent  uint64  // hash of the block before it (rootHash for a first block), when indexed or partial
	tokens  []int32 // [blockSize] when indexed: its token ids, to rule out collisions
	part    []int32 // when partial: the tokens in its first slots, 0 < len < blockSize (a view of Pool.partBuf)
	prev    int32   // free-list links
	next    int32
}

// seq is one sequence's view of the pool.
type seq struct {
	table  []int32  // physical block ids, in order; may extend past tokens (reserved slots)
	tokens []int32  // ids of the tokens whose KV is in the blocks (committed), in order
	hashes []uint64 // chain hash of each full block: [len(tokens)/blockSize]
}

// Pool hands out block ids [0, NumBlocks) of a paged KV store to
// sequences, with ref counts, prefix caching and copy-on-write. See the
// package comment for its invariants. A Pool is not safe for concurrent
// use: one goroutine (the engine loop) owns it.
type Pool struct {
	blockSize int
	blocks    []block // [NumBlocks]
	free      lru
	index     map[uint64]int32   // chain hash -> block id; full blocks only
	partials  map[uint64][]int32 // chain hash of the full block before -> partial blocks after it (partial.go)
	seqs      map[string]*seq
	stats     Stats
	noPrefix  bool        // DisablePrefixCache: lookups find nothing
	observer  func(Event) // SetObserver: told of every hash-index change; nil: none
}

// New returns a pool of numBlocks blocks of blockSize token slots, all free.
func New(numBlocks, blockSize int) (*Pool, error) {
	if numBlocks <= 0 || blockSize <= 0 || numBlocks > 1<<31-1 {
		return nil, fmt.Errorf("kvcache: a pool needs a positive block count and size (got %d blocks of %d)", numBlocks, blockSize)
	}
	p := &Pool{
		blockSize: blockSize,
		blocks:    make([]block, numBlocks),
		free:      lru{head: none, tail: none},
		index:     map[uint64]int32{},
		partials:  map[uint64][]int32{},
		seqs:      map[string]*seq{},
	}
	// Every block's part is a fixed view of one buffer, so that listing
	// a partial block on each Commit allocates nothing.
	partBuf := make([]int32, numBlocks*blockSize)
	for b := range p.blocks {
		p.blocks[b].part = partBuf[b*blockSize : b*blockSize : (b+1)*blockSize]
		p.free.pushBack(p.blocks, int32(b))
	}
	return p, nil
}

// DisablePrefixCache makes every lookup miss: new sequences compute their
// whole prompt (for measuring what the cache saves, as a --no-prefix-cache
// flag does). Forks still share blocks.
func (p *Pool) DisablePrefixCache() { p.noPrefix = true }

// BlockSize is the number of token slots per block.
func (p *Pool) BlockSize() int { return p.blockSize }

// NumBlocks is the pool's size in blocks.
func (p *Pool) NumBlocks() int { return len(p.blocks) }

// NumFree is the number of blocks no sequence holds (cached or not): what
// allocations may take.
func (p *Pool) NumFree() int { return p.free.len }

// Has reports whether sequence id holds blocks (was allocated and not freed).
func (p *Pool) Has(id string) bool { return p.seqs[id] != nil }

// Table returns a copy of sequence id's block table (nil if unknown).
func (p *Pool) Table(id string) []int32 {
	if s := p.seqs[id]; s != nil {
		return slices.Clone(s.table)
	}
	return nil
}

// TableView returns sequence id's block table itself, not a copy (nil if
// unknown): read-only, and valid until the sequence's next Allocate,
// Truncate or Free, which may change or drop it. The scheduler's plans use
// it to hand tables to the forward without copying them each step.
func (p *Pool) TableView(id string) []int32 {
	if s := p.seqs[id]; s != nil {
		return s.table[:len(s.table):len(s.table)]
	}
	return nil
}

// Len is the number of tokens of sequence id whose KV is committed.
func (p *Pool) Len(id string) int {
	if s := p.seqs[id]; s != nil {
		return len(s.tokens)
	}
	return 0
}

// BlocksFor is the number of blocks that hold n tokens.
func (p *Pool) BlocksFor(n int) int { return (n + p.blockSize - 1) / p.blockSize }

// CachedPrefix is how many leading tokens of a new sequence with these
// token ids Allocate would serve from the prefix cache: whole blocks, then
// the first tokens of a partial block, and never the last token (its
// logits must be computed).
func (p *Pool) CachedPrefix(tokens []int32) int {
	hits, _, _, k := p.match(tokens)
	return len(hits)*p.blockSize + k
}

// match finds the cached blocks of tokens' longest cached prefix, leaving
// at least one token to compute, and their chain hashes; then the partial
// block src whose first k slots hold the next k tokens (k = 0: none).
func (p *Pool) match(tokens []int32) (hits []int32, hashes []uint64, src int32, k int) {
	if p.noPrefix {
		return nil, nil, none, 0
	}
	bs := p.blockSize
	parent := rootHash
	for j := 0; (j+1)*bs <= len(tokens)-1; j++ {
		chunk := tokens[j*bs : (j+1)*bs]
		h := hashBlock(parent, chunk)
		b, ok := p.index[h]
		if !ok || p.blocks[b].parent != parent || !slices.Equal(p.blocks[b].tokens, chunk) {
			break
		}
		hits, hashes = append(hits, b), append(hashes, h)
		parent = h
	}
	lo := len(hits) * bs
	if hi := min(len(tokens)-1, lo+bs-1); hi > lo {
		src, k = p.matchPartial(parent, tokens[lo:hi])
	} else {
		src = none
	}
	return hits, hashes, src, k
}

// CanAllocate reports how many free blocks Allocate(id, tokens, n) would
// take, and whether the pool has them.
func (p *Pool) CanAllocate(id string, tokens []int32, n int) (need int, ok bool) {
	_, _, _, _, need = p.need(id, tokens, n)
	return need, need <= p.free.len
}

func (p *Pool) need(id string, tokens []int32, n int) (hits []int32, hashes []uint64, src int32, k, need int) {
	var computed, have int
	if s := p.seqs[id]; s == nil {
		hits, hashes, src, k = p.match(tokens)
		computed, have = len(hits)*p.blockSize+k, len(hits)
		for _, b := range hits {
			if p.blocks[b].ref == 0 {
				need++ // a cached block on the free list leaves it
			}
		}
		if k > 0 {
			need++ // the copy of the partial block
			have++
		}
	} else {
		computed, have = len(s.tokens), len(s.table)
		if w := computed / p.blockSize; n > 0 && w < have && p.blocks[s.table[w]].ref > 1 {
			need++ // copy-on-write of the shared partial block
		}
	}
	if want := p.BlocksFor(computed + n); want > have {
		need += want - have
	}
	return hits, hashes, src, k, need
}

// Allocate makes room in sequence id's blocks for n more tokens after the
// ones already committed. tokens are the sequence's known token ids
// (prompt and output); a new sequence (id unknown) first takes the blocks
// of tokens' longest cached prefix and a copy of a partial block holding
// the tokens after them, if any (Alloc.Cached tokens, which need no
// computing: n counts from there). The partial block the first new token
// lands in is made private first: if shared, it is copied (Alloc.Copies);
// if in the hash index, it leaves it. Allocate changes nothing and returns
// false if the pool lacks free blocks.
func (p *Pool) Allocate(id string, tokens []int32, n int) (Alloc, bool) {
	if n < 0 {
		return Alloc{}, false
	}
	hits, hashes, src, k, need := p.need(id, tokens, n)
	if need > p.free.len {
		return Alloc{}, false
	}
	var a Alloc
	s := p.seqs[id]
	if s == nil {
		for _, b := range hits {
			p.acquire(b)
		}
		a.Cached = len(hits)*p.blockSize + k
		if k > 0 {
			// Copy-on-write of the partial block: src stays listed for
			// others. take may hand out src itself when it is free and
			// first in line: then its slots are already in place.
			dst := p.take()
			if dst != src {
				a.Copies = append(a.Copies, Copy{Src: src, Dst: dst})
			}
			hits = append(hits, dst)
		}
		s = &seq{table: hits, hashes: hashes, tokens: slices.Clone(tokens[:a.Cached])}
		p.seqs[id] = s
		p.stats.PrefixQueries += int64(len(tokens))
		p.stats.PrefixHits += int64(a.Cached)
	} else if w := len(s.tokens) / p.blockSize; n > 0 && w < len(s.table) {
		switch b := s.table[w]; {
		case p.blocks[b].ref > 1:
			dst := p.take()
			a.Copies = append(a.Copies, Copy{Src: b, Dst: dst})
			p.release(b)
			s.table[w] = dst
		case p.blocks[b].indexed:
			p.unindex(b) // about to be overwritten past a truncation
		}
	}
	for want := p.BlocksFor(len(s.tokens) + n); len(s.table) < want; {
		s.table = append(s.table, p.take())
	}
	return a, true
}

// Commit records that the KV of tokens, the next tokens of sequence id,
// is now in its blocks (after the forward that Allocate made room for),
// and adds the blocks this fills to the hash index. It returns an error,
// committing nothing, if the sequence is unknown, lacks slots, or a block
// to be written is shared or indexed (Allocate was skipped).
func (p *Pool) Commit(id string, tokens []int32) error {
	s := p.seqs[id]
	if s == nil {
		return fmt.Errorf("kvcache: commit to unknown sequence %q", id)
	}
	lo, hi := len(s.tokens), len(s.tokens)+len(tokens)
	if hi > len(s.table)*p.blockSize {
		return fmt.Errorf("kvcache: sequence %q commits %d tokens past %d but has slots for %d", id, len(tokens), lo, len(s.table)*p.blockSize)
	}
	if len(tokens) > 0 {
		for j := lo / p.blockSize; j <= (hi-1)/p.blockSize; j++ {
			if b := &p.blocks[s.table[j]]; b.ref != 1 || b.indexed {
				return fmt.Errorf("kvcache: sequence %q would write block %d (ref %d, indexed %v)", id, s.table[j], b.ref, b.indexed)
			}
		}
	}
	s.tokens = append(s.tokens, tokens...)
	bs := p.blockSize
	for j := len(s.hashes); (j+1)*bs <= len(s.tokens); j++ {
		parent := rootHash
		if j > 0 {
			parent = s.hashes[j-1]
		}
		chunk := s.tokens[j*bs : (j+1)*bs]
		h := hashBlock(parent, chunk)
		s.hashes = append(s.hashes, h)
		p.unpartial(s.table[j]) // full now
		b := &p.blocks[s.table[j]]
		if _, dup := p.index[h]; dup || b.indexed {
			continue // the same prefix is cached in another block already
		}
		b.indexed, b.hash, b.parent, b.tokens = true, h, parent, slices.Clone(chunk)
		p.index[h] = s.table[j]
		if p.observer != nil {
			e := Event{Kind: BlockStored, Hash: h, Tokens: b.tokens}
			if j > 0 {
				e.Parent, e.HasParent = parent, true
			}
			p.observer(e)
		}
	}
	if w := len(s.tokens) / bs; len(tokens) > 0 && len(s.tokens)%bs != 0 {
		p.setPartial(s.table[w], p.parentOf(s, w), s.tokens[w*bs:])
	}
	return nil
}

// parentOf is the chain hash before sequence s's block j.
func (p *Pool) parentOf(s *seq, j int) uint64 {
	if j == 0 {
		return rootHash
	}
	return s.hashes[j-1]
}

// Fork makes sequence child share parent's committed blocks (n > 1
// samples, beam search): no block is copied until one of them writes into
// the shared partial block.
func (p *Pool) Fork(parent, child string) error {
	ps := p.seqs[parent]
	switch {
	case ps == nil:
		return fmt.Errorf("kvcache: fork of unknown sequence %q", parent)
	case p.seqs[child] != nil:
		return fmt.Errorf("kvcache: fork into existing sequence %q", child)
	}
	cs := &seq{
		table:  slices.Clone(ps.table[:p.BlocksFor(len(ps.tokens))]),
		tokens: slices.Clone(ps.tokens),
		hashes: slices.Clone(ps.hashes),
	}
	for _, b := range cs.table {
		p.acquire(b)
	}
	p.seqs[child] = cs
	return nil
}

// Truncate rolls sequence id back to its first n committed tokens
// (rejected speculative tokens) and releases the blocks past them.
func (p *Pool) Truncate(id string, n int) error {
	s := p.seqs[id]
	if s == nil {
		return fmt.Errorf("kvcache: truncate of unknown sequence %q", id)
	}
	if n < 0 || n > len(s.tokens) {
		return fmt.Errorf("kvcache: truncate sequence %q to %d tokens; it has %d", id, n, len(s.tokens))
	}
	s.tokens, s.hashes = s.tokens[:n], s.hashes[:n/p.blockSize]
	keep := p.BlocksFor(n)
	for j := len(s.table) - 1; j >= keep; j-- {
		if b := s.table[j]; p.blocks[b].ref == 1 {
			p.unpartial(b) // its tokens are rolled back
		}
		p.release(s.table[j])
	}
	s.table = s.table[:keep]
	// The block the sequence now ends in lists only the tokens it keeps
	// (unless another sequence holds it too: that one's tokens are there).
	if w := n / p.blockSize; n%p.blockSize != 0 {
		if b := s.table[w]; p.blocks[b].partial && p.blocks[b].ref == 1 {
			p.setPartial(b, p.parentOf(s, w), s.tokens[w*p.blockSize:])
		}
	}
	return nil
}

// Free releases all of sequence id's blocks (finished, aborted or
// preempted). Its indexed blocks and its listed partial block (unless
// redundant, partial.go) stay findable until evicted, the later blocks
// of the sequence first. Freeing an unknown id does nothing.
func (p *Pool) Free(id string) {
	s := p.seqs[id]
	if s == nil {
		return
	}
	for j := len(s.table) - 1; j >= 0; j-- {
		if b := s.table[j]; p.blocks[b].ref == 1 && p.redundant(b) {
			p.unpartial(b) // another listed block serves all it would
		}
		p.release(s.table[j])
	}
	delete(p.seqs, id)
}

// acquire adds a holder to block b, taking it off the free list if needed.
func (p *Pool) acquire(b int32) {
	if p.blocks[b].ref == 0 {
		p.free.remove(p.blocks, b)
	}
	p.blocks[b].ref++
}

// release drops a holder of block b; at zero it joins the free list.
func (p *Pool) release(b int32) {
	p.blocks[b].ref--
	if p.blocks[b].ref > 0 {
		return
	}
	if p.blocks[b].indexed || p.blocks[b].partial {
		p.free.pushBack(p.blocks, b)
	} else {
		p.free.pushFront(p.blocks, b)
	}
}

// take pops the least recently used free block, evicting it from the hash
// index, and gives it one holder. The free list must not be empty.
func (p *Pool) take() int32 {
	b := p.free.popFront(p.blocks)
	if p.blocks[b].indexed {
		p.unindex(b)
		p.stats.Evictions++
	}
	p.unpartial(b)
	p.blocks[b].ref = 1
	return b
}

func (p *Pool) unindex(b int32) {
	delete(p.index, p.blocks[b].hash)
	p.blocks[b].indexed, p.blocks[b].tokens = false, nil
	if p.observer != nil {
		p.observer(Event{Kind: BlockRemoved, Hash: p.blocks[b].hash})
	}
}
