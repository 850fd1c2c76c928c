package spec

import (
	"fmt"
	"slices"
)

// NGram is a prompt-lookup proposer's configuration. Zero fields take the
// defaults (DefaultNGramMin, DefaultNGramMax).
type NGram struct {
	Min, Max int // n-gram lengths tried, longest first: Min <= n <= Max
}

// Defaults of NGram: vLLM's prompt_lookup_min is 1 when unset; 4 is a
// common prompt_lookup_max (its examples use 4 or 5).
const (
	DefaultNGramMin = 1
	DefaultNGramMax = 4
)

// Resolved returns g with its defaults filled in, or an error for lengths
// that cannot work (negative, or Min > Max).
func (g NGram) Resolved() (NGram, error) {
	if g.Min == 0 {
		g.Min = DefaultNGramMin
	}
	if g.Max == 0 {
		g.Max = max(DefaultNGramMax, g.Min)
	}
	if g.Min < 1 || g.Max < g.Min {
		return g, fmt.Errorf("spec: n-gram lengths min %d, max %d; want 1 <= min <= max", g.Min, g.Max)
	}
	return g, nil
}

// Propose appends to dst, and returns, up to k tokens that followed the
// most recent earlier occurrence of the last n tokens of seq, for the
// largest n in [g.Min, g.Max] that occurs earlier (nothing when none
// does, or k <= 0). The draft may run into the suffix itself (a period
// shorter than k repeats). g must be Resolved.
//
// Cost: O(len(seq) x Max) comparisons at worst, per call.
func (g NGram) Propose(dst, seq []int32, k int) []int32 {
	L := len(seq)
	if k <= 0 {
		return dst
	}
	for n := min(g.Max, L-1); n >= g.Min; n-- {
		suffix := seq[L-n:]
		// An occurrence at start is seq[start:start+n]; it must end before
		// the suffix's last token so that at least one token follows it.
		for start := L - n - 1; start >= 0; start-- {
			if seq[start+n-1] != suffix[n-1] || !slices.Equal(seq[start:start+n], suffix) {
				continue
			}
			from := start + n
			return append(dst, seq[from:min(from+k, L)]...)
		}
	}
	return dst
}
