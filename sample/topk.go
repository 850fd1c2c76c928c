package sample

import (
	"fmt"
	"math"
)

// topK writes the k best finite tokens of logits (order: better) into
// h[:k] (cap(h) >= k) and returns them, unsorted. It scans once keeping a
// binary heap whose root h[0] is the worst kept token, so most tokens cost
// one comparison: O(n + m log k) for m replacements, no full sort.
//
// -Inf logits (masked tokens) are never kept; NaN or +Inf is an error.
//
//	h[0] worst kept; children of i at 2i+1, 2i+2; every parent worse than its children.
func topK(h []candidate, logits []float32, k int) ([]candidate, error) {
	h = h[:0]
	root := float32(math.Inf(-1)) // logit of h[0] once the heap is full
	for i, l := range logits {
		if l <= root { // not better than the worst kept (ids ascend, so ties lose)
			continue
		}
		if l != l || l > math.MaxFloat32 {
			return nil, fmt.Errorf("sample: logit of token %d is %v", i, l)
		}
		c := candidate{logit: l, id: int32(i)}
		if len(h) < k {
			h = append(h, c)
			siftUp(h, len(h)-1)
			if len(h) == k {
				root = h[0].logit
			}
			continue
		}
		if !better(c, h[0]) {
			continue
		}
		h[0] = c
		siftDown(h, 0)
		root = h[0].logit
	}
	return h, nil
}

// siftUp restores the heap (parent worse than child) after h[i] changed.
func siftUp(h []candidate, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !better(h[parent], h[i]) {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

// siftDown restores the heap after h[i] became better than it was.
func siftDown(h []candidate, i int) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && better(h[c], h[r]) {
			c = r // the worse child
		}
		if !better(h[i], h[c]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// allFinite writes every token with a finite logit into dst (cap(dst) >=
// len(logits)) and returns it: the candidate list when top-k is off.
func allFinite(dst []candidate, logits []float32) ([]candidate, error) {
	dst = dst[:0]
	for i, l := range logits {
		if l < -math.MaxFloat32 {
			continue // -Inf: masked
		}
		if l != l || l > math.MaxFloat32 {
			return nil, fmt.Errorf("sample: logit of token %d is %v", i, l)
		}
		dst = append(dst, candidate{logit: l, id: int32(i)})
	}
	return dst, nil
}
