package kvcache

import "slices"

// Partial blocks: the prefix cache's entries for a sequence's last,
// not yet full block. The hash index holds full blocks only (their chain
// hash covers BlockSize tokens); a block of 1 to BlockSize-1 committed
// tokens is instead listed under the chain hash of the full block before
// it (rootHash for a first block), with the tokens it holds (block.part):
//
//	partials:  h(h7, a[16:32]) -> [ 9 ]     block 9 holds a[32:38] (6 slots)
//
// A sequence's partial block is listed from the Commit that fills some of
// its slots until it fills up (then it may join the hash index), is
// taken for other contents (take), or a Truncate drops it; a Free keeps it
// listed (at the back of the free list, like a cached full block) unless
// another listed block after the same parent holds its tokens and more
// (redundant). A new
// sequence whose tokens after its full-block hits begin with some of a
// listed block's tokens (the longest such prefix, k tokens) gets a copy of
// that block (Alloc.Copies: the listed block is never written by anyone
// but the sequence that filled it, and only past its listed tokens) and
// computes from slot k on. Partial blocks are never announced to the
// observer: a router sees whole blocks only, as llm-d expects.
//
// Cost: a lookup compares the request's next tokens with every block
// listed after its last whole-block hit (at most the free and held
// blocks, in practice the few sequences that ended in that block); the
// lists' token copies live in one buffer of NumBlocks x BlockSize ids
// made by New, so listing allocates nothing per step.

// setPartial lists block b as holding toks (0 < len < BlockSize) after
// the chain whose last full block hashes to parent, or updates its entry.
func (p *Pool) setPartial(b int32, parent uint64, toks []int32) {
	if p.noPrefix {
		return
	}
	blk := &p.blocks[b]
	if blk.partial && blk.parent != parent {
		p.unpartial(b)
	}
	blk.part = append(blk.part[:0], toks...)
	if !blk.partial {
		blk.partial, blk.parent = true, parent
		p.partials[parent] = append(p.partials[parent], b)
	}
}

// unpartial takes block b off the partial list, if it is on it.
func (p *Pool) unpartial(b int32) {
	blk := &p.blocks[b]
	if !blk.partial {
		return
	}
	list := p.partials[blk.parent]
	for i, x := range list {
		if x == b {
			list[i] = list[len(list)-1]
			list = list[:len(list)-1]
			break
		}
	}
	if len(list) == 0 {
		delete(p.partials, blk.parent)
	} else {
		p.partials[blk.parent] = list
	}
	blk.partial, blk.part = false, blk.part[:0]
}

// redundant reports whether listed block b's tokens are a prefix of
// another listed block's after the same parent: every lookup b would
// serve, that one serves as well, so a freed b need not stay listed
// (beam search and n > 1 free many such blocks under one parent; keeping
// only the longest keeps lookups short and the free list's front for
// reuse).
func (p *Pool) redundant(b int32) bool {
	blk := &p.blocks[b]
	if !blk.partial {
		return false
	}
	for _, c := range p.partials[blk.parent] {
		if part := p.blocks[c].part; c != b && len(part) >= len(blk.part) && slices.Equal(part[:len(blk.part)], blk.part) {
			return true
		}
	}
	return false
}

// matchPartial finds the listed partial block after parent whose tokens
// share the longest prefix with want, and that length k (0, src none:
// no block shares a token). Among equal lengths the lowest block id wins,
// so the choice does not depend on the list's order.
func (p *Pool) matchPartial(parent uint64, want []int32) (src int32, k int) {
	src = none
	for _, b := range p.partials[parent] {
		part := p.blocks[b].part
		n := 0
		for n < len(part) && n < len(want) && part[n] == want[n] {
			n++
		}
		if n > k || n == k && n > 0 && b < src {
			src, k = b, n
		}
	}
	return src, k
}
