package grammar

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// TokenIndex joins a Program and a Vocabulary: it makes TokenMatchers and
// caches, shared by all of them, the part of each token mask that does not
// depend on the parse stack. Safe for concurrent use; build one per
// (grammar, vocabulary) and keep it (compiled grammars are meant to be
// cached by schema and vocabulary).
//
// The cache. A mask walk from an Earley set S reads token bytes until each
// is rejected or ends. Items of S begun in S itself ("self") are fully known
// from S's items; items begun earlier ("deep") are known only by their node
// while the walk does not complete them, because completing one looks into
// the set where it began. So the walk from the abstraction of S, with every
// deep origin replaced by one marker, decides every token whose walk never
// completes a deep item: it is accepted (the full walk, which has at least
// these items, accepts it too) or rejected (the full walk had exactly these
// items). The remaining tokens, rejected after some deep completion, lie in
// trie subtrees the abstract walk records; only those are walked per step,
// from the real set. The abstraction is the cache key, so a state such as
// "inside a JSON string" is walked once per index, whatever string it is in.
type TokenIndex struct {
	prog  *Program
	vocab *Vocabulary

	mu    sync.Mutex
	local *store               // sets with originDeep; ids mean nothing outside it
	cache map[string]*partMask // abstract set encoding → its context-free part of the mask
	keyb  []item               // scratch
	walk  []int32              // scratch: set per trie depth
	hit   []bool               // scratch: a deep completion on the path
	stats IndexStats

	cacheBytes int64        // bytes of cache: masks, ranges and keys
	bytes      atomic.Int64 // Bytes() without the lock (a mask walk may hold it long)
}

// partMask is the context-free part of the mask at an abstract set.
type partMask struct {
	accept []uint64 // tokens accepted whatever the parse stack below
	ranges []int32  // pairs [start, end) of trie nodes whose tokens need the full walk
}

// IndexStats counts cache use.
type IndexStats struct {
	Keys   int // abstract sets walked (cache misses)
	Hits   int // masks served from the cache
	Ranges int // uncertain trie ranges over all keys
}

// NewTokenIndex prepares token masks of p's language over v.
func NewTokenIndex(p *Program, v *Vocabulary) (*TokenIndex, error) {
	if p.Empty() {
		return nil, ErrEmptyLanguage
	}
	x := &TokenIndex{prog: p, vocab: v, local: newStore(p), cache: map[string]*partMask{}}
	x.bytes.Store(x.prog.Bytes() + x.local.bytes)
	return x, nil
}

// Bytes estimates the memory the index holds: its program, its
// context-free sets and its cached masks (not the vocabulary, which is
// shared by every index of a model). It grows as masks are cached, up to
// the program plus about maxIndexCacheBytes.
func (x *TokenIndex) Bytes() int64 { return x.bytes.Load() }

// Stats returns the cache counters.
func (x *TokenIndex) Stats() IndexStats {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stats
}

// maxLocalStates and maxLocalBytes bound the context-free store; past
// either the store is dropped (the cached masks do not refer to it).
const (
	maxLocalStates = 1 << 17
	maxLocalBytes  = 16 << 20
)

// maxCachedMasks and maxIndexCacheBytes bound the cached partial masks of
// an index (each is one bit per token: 19 KiB at a 152k vocabulary, so 16
// MiB holds about 860 of them there, 4096 at a 32k vocabulary).
const (
	maxCachedMasks     = 4096
	maxIndexCacheBytes = 16 << 20
)

// part returns the context-free part of the mask at set id of store s.
func (x *TokenIndex) part(s *store, id int32) *partMask {
	x.mu.Lock()
	defer x.mu.Unlock()
	items := x.keyb[:0]
	for _, it := range s.states[id].items {
		if it.origin != originSelf {
			it.origin = originDeep
		}
		items = append(items, it)
	}
	slices.SortFunc(items, itemLess)
	items = slices.Compact(items)
	x.keyb = items
	key := x.local.encode(items, false)
	if pm, ok := x.cache[string(key)]; ok {
		x.stats.Hits++
		return pm
	}
	skey := string(key)
	if len(x.local.states) > maxLocalStates || x.local.bytes > maxLocalBytes {
		x.local = newStore(x.prog)
	}
	if len(x.cache) >= maxCachedMasks || x.cacheBytes > maxIndexCacheBytes {
		clear(x.cache) // a grammar with this many distinct contexts: start over
		x.cacheBytes = 0
	}
	root := x.local.intern(items, false)
	pm := x.walkLocal(root)
	x.cache[skey] = pm
	x.cacheBytes += int64(8*len(pm.accept)+4*len(pm.ranges)+len(skey)) + 96 // + map slot, headers
	x.stats.Keys++
	x.stats.Ranges += len(pm.ranges) / 2
	x.bytes.Store(x.prog.Bytes() + x.local.bytes + x.cacheBytes)
	return pm
}

// walkLocal walks the whole trie from root in the context-free store.
func (x *TokenIndex) walkLocal(root int32) *partMask {
	t := &x.vocab.trie
	st := x.local
	pm := &partMask{accept: make([]uint64, MaskWords(x.vocab.Size()))}
	if cap(x.walk) < t.maxDepth+1 {
		x.walk = make([]int32, t.maxDepth+1)
		x.hit = make([]bool, t.maxDepth+1)
	}
	walk, hit := x.walk[:t.maxDepth+1], x.hit[:t.maxDepth+1]
	walk[0], hit[0] = root, false
	n := int32(len(t.label))
	for i := int32(1); i < n; {
		d := t.depth[i]
		s := st.step(walk[d-1], t.label[i])
		if s == deadState {
			if hit[d-1] {
				if k := len(pm.ranges); k > 0 && pm.ranges[k-1] == i {
					pm.ranges[k-1] = t.end[i]
				} else {
					pm.ranges = append(pm.ranges, i, t.end[i])
				}
			}
			i = t.end[i]
			continue
		}
		walk[d], hit[d] = s, hit[d-1] || st.states[s].deepHit
		for _, id := range t.tokensAt(i) {
			setBit(pm.accept, id)
		}
		i++
	}
	return pm
}

// String describes the index (for logs).
func (x *TokenIndex) String() string {
	s := x.Stats()
	return fmt.Sprintf("TokenIndex{nodes: %d, vocab: %d, keys: %d, hits: %d}", x.prog.Nodes(), x.vocab.Size(), s.Keys, s.Hits)
}
