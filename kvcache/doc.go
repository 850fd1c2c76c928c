// Package kvcache is the block manager of the paged KV store: it decides
// which block ids [0, NumBlocks) of the model's KV pages (the same id in
// every layer) each sequence uses. It does no I/O and knows no model: the
// caller applies the block copies it asks for to the KV store.
//
//	sequence "a" table: [ 7 | 2 | 9 ]     tokens 0..15 | 16..31 | 32..37 (partial)
//	sequence "b" table: [ 7 | 2 | 4 ]     forked from "a" or a prefix hit: shares 7, 2
//	                       |   |
//	hash index:  h(root, a[0:16]) -> 7,  h(h7, a[16:32]) -> 2   (full blocks only)
//	partial list: h(h7, a[16:32]) -> [9]: block 9 holds a[32:38]  (partial.go)
//	free list (LRU):  front [ 5  3 | 11  0  8 ] back
//	                   uncached    cached, freed: still findable, evicted front first
//
// Lifecycle of one sequence:
//
//	CanAllocate / Allocate(id, tokens, n)  room for n more tokens (a new id first
//	                                        takes its cached prefix: whole blocks, then
//	                                        a copy of a listed partial block; a shared
//	                                        partial block is copied: Alloc.Copies)
//	... the caller runs the forward, which writes those n tokens' KV ...
//	Commit(id, those tokens)               full blocks join the hash index, the
//	                                        partial last block the partial list
//	Fork / Truncate                        share blocks; roll back rejected tokens
//	Free(id)                               ref counts drop; cached blocks (and the
//	                                        listed partial one) stay findable
//
// Events: SetObserver(f) has the pool call f for every change of the hash
// index (BlockStored with hash, parent hash and tokens; BlockRemoved;
// AllBlocksCleared from ResetPrefixCache), in order, so a router can
// mirror which prefixes this replica holds (package kvevents publishes
// them in llm-d's format). Partial blocks are never announced: llm-d's
// index is of whole blocks. With no observer the pool does no event work.
//
// Invariants (Pool.Check verifies them):
//
//   - Every block is either held (ref count = the number of block tables
//     that hold it, > 0) or on the free list (ref count 0), never both: no
//     block leaks.
//   - A block that is shared (ref count > 1) or in the hash index is never
//     written: Allocate copies a shared partial block before a sequence
//     writes into it, and takes an unshared indexed one out of the index.
//     A block on the partial list is written only by the one sequence
//     that holds it, past its listed tokens (and the list follows its
//     Commits and Truncates); others get copies.
//   - The hash index maps the chain hash of a full block (parent block's
//     hash, then its token ids) to a block whose KV is exactly those tokens
//     after exactly that prefix; a hit also compares the tokens and the
//     parent hash, so a hash collision is a miss, not wrong attention.
//   - A partial block is listed under the chain hash of the full block
//     before it with the tokens its first slots hold (fewer than
//     BlockSize); a hit compares those tokens.
//   - A prefix hit never covers a sequence's last known token: its logits
//     have to be computed.
package kvcache
