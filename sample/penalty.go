package sample

import (
	"fmt"
	"slices"
)

// applyBias adds each logit bias to its token: w[ids[i]] += vals[i].
func applyBias(w []float32, ids []int32, vals []float32) {
	for i, id := range ids {
		w[id] += vals[i]
	}
}

// applyPenalties penalises the tokens of window (the history tokens the
// penalties look at) in w, llama.cpp's way: for each distinct token t seen
// c times,
//
//	w[t] = w[t] <= 0 ? w[t]*rep : w[t]/rep    // repetition (CTRL / HF): always towards "less likely"
//	w[t] -= c*freq + presence                 // OpenAI frequency and presence
//
// Counting sorts a copy of window in scratch (no vocabulary-sized count
// table per sampler); it returns scratch for reuse.
func applyPenalties(w []float32, window, scratch []int32, rep, presence, freq float32) ([]int32, error) {
	scratch = append(scratch[:0], window...)
	slices.Sort(scratch)
	for i := 0; i < len(scratch); {
		t := scratch[i]
		j := i + 1
		for j < len(scratch) && scratch[j] == t {
			j++
		}
		if t < 0 || int(t) >= len(w) {
			return scratch, fmt.Errorf("sample: history token %d outside vocabulary [0, %d)", t, len(w))
		}
		count := float32(j - i)
		l := w[t]
		if l <= 0 {
			l *= rep
		} else {
			l /= rep
		}
		w[t] = l - (count*freq + presence)
		i = j
	}
	return scratch, nil
}
