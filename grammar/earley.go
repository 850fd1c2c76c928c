package grammar

import (
	"encoding/binary"
	"slices"
)

// Earley sets as hash-consed states.
//
// An item is (node, origin): a position inside one rule's automaton and the
// set where that rule's run began. The origin is the id of that set in the
// store (not a byte offset), originSelf for a rule begun in the set that
// holds the item, or originDeep in the context-free stores of a TokenIndex
// (a set below the walk's start, whose items are unknown there). Because an
// item names its origin set by id, a set is fully described by its items:
// equal item lists behave the same for ever after, so the store interns them
// (one id per distinct list) and caches each set's successor per byte class.
// Walking bytes through cached transitions is then a table lookup; only a
// byte never seen from a set runs the Earley scan and closure.
//
// Closure: prediction adds (start of R, self) for every call of R, and, when
// R is nullable, also steps over the call at once (Aycock and Horspool's fix
// for ε-rules, which makes completing an item begun in the same set
// unnecessary); completion of an item begun in set o advances the items of o
// that call the completed rule. An item begun at originDeep that completes
// sets deepHit: the full set there would hold more items than this one.

const (
	originSelf int32 = -1
	originDeep int32 = -2

	deadState int32 = 0 // the empty set: no item, every byte rejected
)

type item struct{ node, origin int32 }

type estate struct {
	items   []item  // sorted by (node, origin); never modified once interned
	deepHit bool    // a completion reached originDeep
	trans   []int32 // [byte classes] successor set id, -1 not yet known; nil until first step
}

type store struct {
	p      *Program
	states []estate
	index  map[string]int32 // item list (and deepHit) encoding → id

	kernel []item
	work   []item
	seen   map[item]struct{}
	key    []byte

	bytes int64 // estimated memory of states and index (storeSetBytes each, plus items and transitions)
}

// storeSetBytes is a set's fixed cost in a store: its estate, its index
// entry (map slot and string header) and slice headers; each item adds 16
// bytes (the item list and its copy in the index key) and each cached
// transition table 4 bytes per byte class.
const storeSetBytes = 128

func newStore(p *Program) *store {
	s := &store{p: p, index: map[string]int32{}, seen: map[item]struct{}{}}
	s.intern(nil, false) // deadState
	return s
}

// clone returns a store with the same states (item lists shared, as they
// are immutable) and empty transition caches.
func (s *store) clone() *store {
	c := &store{p: s.p, index: make(map[string]int32, len(s.index)), seen: map[item]struct{}{}, bytes: s.bytes}
	c.states = make([]estate, len(s.states))
	for i, st := range s.states {
		c.states[i] = estate{items: st.items, deepHit: st.deepHit}
	}
	for k, v := range s.index {
		c.index[k] = v
	}
	return c
}

func (s *store) encode(items []item, deepHit bool) []byte {
	k := s.key[:0]
	for _, it := range items {
		k = binary.LittleEndian.AppendUint32(k, uint32(it.node))
		k = binary.LittleEndian.AppendUint32(k, uint32(it.origin))
	}
	if deepHit {
		k = append(k, 1)
	}
	s.key = k
	return k
}

// intern returns the id of the set with these items (sorted and deduplicated
// by the caller), adding it when new. The slice is copied.
func (s *store) intern(items []item, deepHit bool) int32 {
	k := s.encode(items, deepHit)
	if id, ok := s.index[string(k)]; ok {
		return id
	}
	id := int32(len(s.states))
	s.states = append(s.states, estate{items: slices.Clone(items), deepHit: deepHit})
	s.index[string(k)] = id
	s.bytes += storeSetBytes + 16*int64(len(items))
	return id
}

func itemLess(a, b item) int {
	if a.node != b.node {
		return int(a.node - b.node)
	}
	return int(a.origin - b.origin)
}

// closeAndIntern runs the Earley closure from the kernel items of a new set
// and interns the result.
func (s *store) closeAndIntern(kernel []item) int32 {
	if len(kernel) == 0 {
		return deadState
	}
	p := s.p
	work := s.work[:0]
	clear(s.seen)
	add := func(it item) {
		if _, ok := s.seen[it]; ok {
			return
		}
		s.seen[it] = struct{}{}
		work = append(work, it)
	}
	for _, it := range kernel {
		add(it)
	}
	deepHit := false
	for i := 0; i < len(work); i++ {
		it := work[i]
		nd := &p.nodes[it.node]
		for _, c := range nd.calls {
			add(item{p.ruleStart[c.rule], originSelf})
			if p.nullable[c.rule] {
				add(item{c.to, it.origin})
			}
		}
		if nd.final >= 0 {
			switch o := it.origin; {
			case o == originSelf:
				// An ε-derivation: already stepped over at prediction.
			case o == originDeep:
				deepHit = true
			default:
				r := nd.final
				for _, w := range s.states[o].items {
					for _, c := range p.nodes[w.node].calls {
						if c.rule == r {
							wo := w.origin
							if wo == originSelf {
								wo = o
							}
							add(item{c.to, wo})
						}
					}
				}
			}
		}
	}
	s.work = work
	slices.SortFunc(work, itemLess)
	return s.intern(work, deepHit)
}

// step returns the set after reading byte b in set id (deadState when b is
// rejected), from the cache when known.
func (s *store) step(id int32, b byte) int32 {
	c := s.p.classOf[b]
	if t := s.states[id].trans; t != nil && t[c] >= 0 {
		return t[c]
	}
	k := s.kernel[:0]
	for _, it := range s.states[id].items {
		for _, e := range s.p.nodes[it.node].terms {
			if e.lo <= b && b <= e.hi {
				o := it.origin
				if o == originSelf {
					o = id
				}
				k = append(k, item{e.to, o})
			}
		}
	}
	s.kernel = k
	next := s.closeAndIntern(k)
	st := &s.states[id]
	if st.trans == nil {
		st.trans = make([]int32, len(s.p.classRep))
		s.bytes += 4 * int64(len(st.trans))
		for i := range st.trans {
			st.trans[i] = -1
		}
	}
	st.trans[c] = next
	return next
}

// canEnd reports whether set id holds a completed run of the root rule begun
// in set start (the matcher's initial set).
func (s *store) canEnd(id, start int32) bool {
	root := s.p.root
	for _, it := range s.states[id].items {
		if s.p.nodes[it.node].final == root && (it.origin == start || (it.origin == originSelf && id == start)) {
			return true
		}
	}
	return false
}

// compact drops every set not reachable from roots (through origins) and
// renumbers the rest; roots is rewritten in place. Transition caches are
// cleared. It bounds the memory of a long-lived matcher.
func (s *store) compact(roots []int32) {
	keep := make([]int32, len(s.states))
	for i := range keep {
		keep[i] = -1
	}
	keep[deadState] = 0
	order := []int32{deadState}
	var stack []int32
	for _, r := range roots {
		stack = append(stack, r)
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if keep[id] >= 0 {
			continue
		}
		keep[id] = 0 // placeholder: numbered below
		order = append(order, id)
		for _, it := range s.states[id].items {
			if it.origin >= 0 && keep[it.origin] < 0 {
				stack = append(stack, it.origin)
			}
		}
	}
	slices.Sort(order[1:]) // keep the old relative order: origins precede their users
	for i, id := range order {
		keep[id] = int32(i)
	}
	states := make([]estate, len(order))
	index := make(map[string]int32, len(order))
	s.bytes = 0
	for i, id := range order {
		old := s.states[id]
		items := make([]item, len(old.items))
		for j, it := range old.items {
			if it.origin >= 0 {
				it.origin = keep[it.origin]
			}
			items[j] = it
		}
		slices.SortFunc(items, itemLess)
		states[i] = estate{items: items, deepHit: old.deepHit}
		index[string(s.encode(items, old.deepHit))] = int32(i)
		s.bytes += storeSetBytes + 16*int64(len(items))
	}
	s.states, s.index = states, index
	for i, r := range roots {
		roots[i] = keep[r]
	}
}
