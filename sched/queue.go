package sched

import "slices"

// waiting is the queue of requests without blocks, ordered by (priority,
// arrival): first come, first served within a priority. A preempted
// request keeps its arrival, so it goes back ahead of everything that
// arrived after it.
type waiting []*request

func before(a, b *request) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	return a.arrival < b.arrival
}

func (q *waiting) push(r *request) {
	i := len(*q)
	for i > 0 && before(r, (*q)[i-1]) {
		i--
	}
	*q = slices.Insert(*q, i, r)
}

func (q *waiting) remove(r *request) bool {
	if i := slices.Index(*q, r); i >= 0 {
		*q = slices.Delete(*q, i, i+1)
		return true
	}
	return false
}
