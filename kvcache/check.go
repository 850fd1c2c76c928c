package kvcache

import (
	"fmt"
	"slices"
)

// Check verifies the pool's invariants (see the package comment) and
// returns the first violation. It walks everything: for tests, and for a
// debug mode, not for every step of a server.
func (p *Pool) Check() error {
	bs := p.blockSize
	holders := make([]int32, len(p.blocks))
	ids := make([]string, 0, len(p.seqs))
	for id := range p.seqs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := p.seqs[id]
		if len(s.table) < p.BlocksFor(len(s.tokens)) {
			return fmt.Errorf("kvcache: sequence %q has %d tokens in %d blocks", id, len(s.tokens), len(s.table))
		}
		if len(s.hashes) != len(s.tokens)/bs {
			return fmt.Errorf("kvcache: sequence %q has %d full blocks but %d hashes", id, len(s.tokens)/bs, len(s.hashes))
		}
		seen := map[int32]bool{}
		parent := rootHash
		for j, b := range s.table {
			if b < 0 || int(b) >= len(p.blocks) {
				return fmt.Errorf("kvcache: sequence %q holds block %d outside [0, %d)", id, b, len(p.blocks))
			}
			if seen[b] {
				return fmt.Errorf("kvcache: sequence %q holds block %d twice", id, b)
			}
			seen[b] = true
			holders[b]++
			if blk := &p.blocks[b]; blk.partial {
				// A listed partial block is this sequence's last one, and
				// one of its tokens and the listed ones extends the other.
				lo := j * bs
				if j != len(s.tokens)/bs || lo == len(s.tokens) || blk.parent != parent {
					return fmt.Errorf("kvcache: sequence %q block %d (of %d tokens) is listed partial block %d", id, j, len(s.tokens), b)
				}
				if n := min(len(blk.part), len(s.tokens)-lo); !slices.Equal(blk.part[:n], s.tokens[lo:lo+n]) {
					return fmt.Errorf("kvcache: sequence %q block %d is listed partial block %d of other tokens", id, j, b)
				}
			}
			if j >= len(s.hashes) {
				continue
			}
			chunk := s.tokens[j*bs : (j+1)*bs]
			if h := hashBlock(parent, chunk); h != s.hashes[j] {
				return fmt.Errorf("kvcache: sequence %q block %d: hash %x, its tokens hash to %x", id, j, s.hashes[j], h)
			}
			if blk := &p.blocks[b]; blk.indexed && (blk.hash != s.hashes[j] || !slices.Equal(blk.tokens, chunk)) {
				return fmt.Errorf("kvcache: sequence %q block %d is indexed block %d of other contents", id, j, b)
			}
			parent = s.hashes[j]
		}
	}
	free := 0
	for b := range p.blocks {
		blk := &p.blocks[b]
		if blk.ref != holders[b] {
			return fmt.Errorf("kvcache: block %d has ref count %d but %d tables hold it", b, blk.ref, holders[b])
		}
		if blk.inFree != (blk.ref == 0) {
			return fmt.Errorf("kvcache: block %d with ref count %d: on free list %v", b, blk.ref, blk.inFree)
		}
		if blk.inFree {
			free++
		}
		if blk.indexed {
			if len(blk.tokens) != bs || hashBlock(blk.parent, blk.tokens) != blk.hash {
				return fmt.Errorf("kvcache: indexed block %d: %d tokens do not hash to its key", b, len(blk.tokens))
			}
			if p.index[blk.hash] != int32(b) {
				return fmt.Errorf("kvcache: block %d marked indexed but the index maps its hash to %d", b, p.index[blk.hash])
			}
		}
	}
	listed := 0
	for parent, list := range p.partials {
		if len(list) == 0 {
			return fmt.Errorf("kvcache: empty partial list under %x", parent)
		}
		for _, b := range list {
			blk := &p.blocks[b]
			if !blk.partial || blk.parent != parent || blk.indexed || len(blk.part) == 0 || len(blk.part) >= bs {
				return fmt.Errorf("kvcache: partial list under %x holds block %d (partial %v, parent %x, indexed %v, %d tokens)", parent, b, blk.partial, blk.parent, blk.indexed, len(blk.part))
			}
			listed++
		}
	}
	for b := range p.blocks {
		if p.blocks[b].partial {
			listed--
		}
	}
	if listed != 0 {
		return fmt.Errorf("kvcache: partial lists and blocks marked partial differ by %d", listed)
	}
	for h, b := range p.index {
		if !p.blocks[b].indexed || p.blocks[b].hash != h {
			return fmt.Errorf("kvcache: index maps %x to block %d, which is not indexed under it", h, b)
		}
	}
	// The free list: every free block once, links consistent, both ways.
	n, prev := 0, none
	for b := p.free.head; b != none; b = p.blocks[b].next {
		if n++; n > len(p.blocks) || !p.blocks[b].inFree || p.blocks[b].prev != prev {
			return fmt.Errorf("kvcache: free list corrupt at block %d", b)
		}
		prev = b
	}
	if n != free || p.free.len != free || p.free.tail != prev {
		return fmt.Errorf("kvcache: free list has %d blocks (len %d), %d blocks are free", n, p.free.len, free)
	}
	return nil
}
