package sample

import (
	"math"
	"sort"
)

// refDist is a plain, sort-everything float64 reading of the chain that
// Sample documents, written independently of the fast code: the
// probability of each token under p given logits and history.
func refDist(logits []float32, history []int32, p Params) []float64 {
	n := len(logits)
	w := make([]float64, n)
	for i, l := range logits {
		w[i] = float64(l)
	}
	for id, b := range p.LogitBias {
		w[id] += float64(b)
	}
	window := history
	if p.PenaltyLastN > 0 && len(window) > p.PenaltyLastN {
		window = window[len(window)-p.PenaltyLastN:]
	}
	count := map[int32]int{}
	for _, t := range window {
		count[t]++
	}
	for t, c := range count {
		// float32 steps, as llama.cpp computes them
		l := float32(w[t])
		if l <= 0 {
			l *= p.RepetitionPenalty
		} else {
			l /= p.RepetitionPenalty
		}
		l -= float32(c)*p.FrequencyPenalty + p.PresencePenalty
		w[t] = float64(l)
	}
	var idx []int
	for i := range w {
		if !math.IsInf(w[i], -1) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return w[idx[a]] > w[idx[b]] }) // stable: ties keep lower id first
	dist := make([]float64, n)
	if p.Temperature == 0 {
		dist[idx[0]] = 1
		return dist
	}
	if p.TopK > 0 && p.TopK < len(idx) {
		idx = idx[:p.TopK]
	}
	if p.TopP < 1 {
		var sum float64
		for _, i := range idx {
			sum += math.Exp(w[i] - w[idx[0]])
		}
		cum := 0.0
		for k, i := range idx {
			cum += math.Exp(w[i]-w[idx[0]]) / sum
			if cum >= float64(p.TopP) {
				idx = idx[:k+1]
				break
			}
		}
	}
	if p.MinP > 0 {
		kept := idx[:0:0]
		for _, i := range idx {
			if math.Exp(w[i]-w[idx[0]]) >= float64(p.MinP) {
				kept = append(kept, i)
			}
		}
		idx = kept
	}
	var sum float64
	for _, i := range idx {
		dist[i] = math.Exp((w[i] - w[idx[0]]) / float64(p.Temperature))
		sum += dist[i]
	}
	for _, i := range idx {
		dist[i] /= sum
	}
	return dist
}

// refOrder returns the ids of logits best first (higher logit, then lower id).
func refOrder(logits []float32) []int32 {
	ids := make([]int32, len(logits))
	for i := range ids {
		ids[i] = int32(i)
	}
	sort.SliceStable(ids, func(a, b int) bool { return logits[ids[a]] > logits[ids[b]] })
	return ids
}
