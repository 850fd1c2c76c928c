package engine

import "math"

// The acceptance-aware policy (Speculation.Adaptive). Each request keeps
// an exponentially weighted record of its drafts: successes (drafted
// tokens accepted) over trials (drafted tokens the target looked at: the
// accepted ones and the first rejected), an estimate p of the chance that
// the next drafted token is accepted, the draft's positions being taken
// as independent. A draft of k tokens then yields
//
//	E(k) = 1 + p + p^2 + ... + p^k = (1 - p^(k+1)) / (1 - p)
//
// tokens per verifying step, at a cost of 1 + k*c target decode steps,
// where c is one drafted token's cost relative to a decode step: a draft
// model's pass (measured: Counters.DraftTime per pass over the step's
// forward time, smoothed; or Speculation.DraftCost) plus the verifying
// row. Each step the request drafts the k (1 to Tokens) that maximises
// E(k) / (1 + k*c), or nothing when even the best gains less than
// minGain tokens per unit cost over decoding alone; it then waits a
// backoff (doubling, up to maxBackoff steps) and probes again with one
// draft.

const (
	specDecay  = 0.8  // weight of the record so far at each new draft
	priorRate  = 0.6  // p before any draft, worth priorTrials trials
	priorTrial = 2.0  //
	minGain    = 1.02 // tokens per unit cost a draft must promise
	maxBackoff = 64   // steps a request waits at most before it probes again
	verifyCost = 0.02 // one verifying row's cost relative to a decode step
	costDecay  = 0.9  // weight of the measured draft cost so far
)

// specRecord is one request's acceptance record.
type specRecord struct {
	succ, trials float64 // decayed sums
	backoff      int     // current backoff in steps (0: none yet)
	wait         int     // steps left before the next probe
	probe        bool    // the next draft is a probe
}

func newSpecRecord() specRecord {
	return specRecord{succ: priorRate * priorTrial, trials: priorTrial}
}

// rate is p, the estimated acceptance of one drafted token.
func (r *specRecord) rate() float64 { return r.succ / r.trials }

// observe adds a verified draft of drafted tokens, accepted of them.
func (r *specRecord) observe(drafted, accepted int) {
	if drafted == 0 {
		return
	}
	trials := accepted
	if accepted < drafted {
		trials++ // the first rejected token
	}
	r.succ = specDecay*r.succ + float64(accepted)
	r.trials = specDecay*r.trials + float64(trials)
}

// tokens is how many tokens to draft this step (0: none), at most k, at
// cost c per drafted token; it counts down the backoff.
func (r *specRecord) tokens(k int, c float64) int {
	if r.wait > 0 {
		r.wait--
		return 0
	}
	if r.probe {
		r.probe = false
		return 1
	}
	best, gain := bestTokens(r.rate(), k, c)
	if gain < minGain {
		r.backoff = min(max(2*r.backoff, 1), maxBackoff)
		r.wait, r.probe = r.backoff, true
		return 0
	}
	r.backoff = 0
	return best
}

// bestTokens is the k in [1, maxK] that maximises E(k)/(1+k*c) for
// acceptance p, and that ratio.
func bestTokens(p float64, maxK int, c float64) (int, float64) {
	best, gain := 1, 0.0
	for k := 1; k <= maxK; k++ {
		var e float64
		if p >= 1 {
			e = float64(k + 1)
		} else {
			e = (1 - math.Pow(p, float64(k+1))) / (1 - p)
		}
		if g := e / (1 + float64(k)*c); g > gain {
			best, gain = k, g
		}
	}
	return best, gain
}
