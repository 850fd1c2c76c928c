package kvcache

// lru is the free list: the blocks with ref count 0, in eviction order.
// The front is taken first. Freed blocks that are in the hash index or
// on the partial list go to the back (kept findable as long as possible);
// freed blocks holding nothing reusable go to the front. Links live in the blocks themselves
// (prev, next: block ids, or none), so the list allocates nothing.
type lru struct {
	head, tail int32 // block ids, or none when empty
	len        int
}

const none int32 = -1

func (l *lru) pushFront(bs []block, b int32) {
	bs[b].prev, bs[b].next = none, l.head
	if l.head != none {
		bs[l.head].prev = b
	} else {
		l.tail = b
	}
	l.head = b
	bs[b].inFree = true
	l.len++
}

func (l *lru) pushBack(bs []block, b int32) {
	bs[b].prev, bs[b].next = l.tail, none
	if l.tail != none {
		bs[l.tail].next = b
	} else {
		l.head = b
	}
	l.tail = b
	bs[b].inFree = true
	l.len++
}

func (l *lru) remove(bs []block, b int32) {
	p, n := bs[b].prev, bs[b].next
	if p != none {
		bs[p].next = n
	} else {
		l.head = n
	}
	if n != none {
		bs[n].prev = p
	} else {
		l.tail = p
	}
	bs[b].prev, bs[b].next, bs[b].inFree = none, none, false
	l.len--
}

// popFront removes and returns the front block; the list must not be empty.
func (l *lru) popFront(bs []block) int32 {
	b := l.head
	l.remove(bs, b)
	return b
}
