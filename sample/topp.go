package sample

import (
	"math/bits"
	"slices"
)

// topP keeps the nucleus of c: the fewest best tokens (order: better) whose
// probability mass reaches p of the total, at least one (llama.cpp's
// top-p with min_keep = 1). c[i].p must hold each token's unnormalised
// weight and total their sum. It reorders c so the nucleus is c[:n] and
// returns n.
//
// Rather than sorting all of c, it quickselects the cut: partition around a
// pivot; if the mass better than the pivot already reaches the target the
// cut lies left, if adding the pivot reaches it the cut is just after the
// pivot, else everything left of the pivot is kept and the search goes right.
// Expected O(len(c)); after 2*log2(n) rounds it falls back to sorting.
//
//	c: [ kept, mass = before | lo .. unknown .. hi | dropped ]
func topP(c []candidate, p float32, total float64) int {
	return topPRounds(c, p, total, 2*bits.Len(uint(len(c))))
}

// topPRounds is topP with at most budget partition rounds before sorting.
func topPRounds(c []candidate, p float32, total float64, budget int) int {
	target := float64(p) * total
	lo, hi := 0, len(c)
	before := 0.0 // mass of c[:lo]; invariant: before < target
	for hi-lo > 1 {
		if budget == 0 {
			slices.SortFunc(c[lo:hi], cmpCandidates)
			for i := lo; i < hi; i++ {
				before += float64(c[i].p)
				if before >= target {
					return i + 1
				}
			}
			return hi
		}
		budget--
		j := partition(c, lo, hi)
		above := 0.0
		for i := lo; i < j; i++ {
			above += float64(c[i].p)
		}
		switch {
		case before+above >= target:
			hi = j // j > lo here: before < target forces above > 0
		case before+above+float64(c[j].p) >= target:
			return j + 1
		default:
			before += above + float64(c[j].p)
			lo = j + 1
		}
	}
	// One candidate c[lo] left, needed since before < target (or none left
	// when rounding left the whole list short of the target: keep it all).
	return hi
}

// partition reorders c[lo:hi] (hi-lo >= 2) around a median-of-three pivot so
// c[lo:j] are better than c[j] and c[j+1:hi] worse, and returns j.
func partition(c []candidate, lo, hi int) int {
	mid := lo + (hi-lo)/2
	last := hi - 1
	// Order c[lo], c[mid], c[last] best first; the median lands in mid.
	if better(c[mid], c[lo]) {
		c[mid], c[lo] = c[lo], c[mid]
	}
	if better(c[last], c[mid]) {
		c[last], c[mid] = c[mid], c[last]
		if better(c[mid], c[lo]) {
			c[mid], c[lo] = c[lo], c[mid]
		}
	}
	c[mid], c[last] = c[last], c[mid]
	pivot := c[last]
	store := lo
	for i := lo; i < last; i++ {
		if better(c[i], pivot) {
			c[i], c[store] = c[store], c[i]
			store++
		}
	}
	c[store], c[last] = c[last], c[store]
	return store
}
