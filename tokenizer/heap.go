package tokenizer

// A binary min-heap over a slice, ordered by before (the element that
// must come out first is "before" the others). The BPE and SentencePiece
// merge loops use it as their priority queue of candidate bigrams; unlike
// container/heap it needs no interface boxing and reuses the caller's
// slice, so encoding allocates nothing per merge.
//
//	q[0] is the top; children of q[i] are q[2i+1], q[2i+2]

// heapPush appends b to q and restores the heap order.
func heapPush[T any](q []T, b T, before func(a, b *T) bool) []T {
	q = append(q, b)
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(&q[i], &q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
	return q
}

// heapPop removes and returns the top of q (len(q) > 0).
func heapPop[T any](q []T, before func(a, b *T) bool) (T, []T) {
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(q) {
			break
		}
		c := l
		if r := l + 1; r < len(q) && before(&q[r], &q[l]) {
			c = r
		}
		if !before(&q[c], &q[i]) {
			break
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
	return top, q
}
