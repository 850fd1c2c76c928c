package spec

import (
	"math"
	"time"
)

// Policy decides how many tokens each request drafts in a step, from what
// speculation has cost and earned so far. It is a pure state machine: the
// engine feeds it each step's forward time and rows (ObserveStep), each
// proposal's time (ObserveDraft) and each verified draft's outcome
// (ObserveVerify), and asks it for a request's draft length (Tokens).
//
// The model. A target forward over r rows takes about Fixed + PerRow*r
// (a least-squares line through recent steps, older ones decaying): on a
// CPU, Fixed is reading every weight once (memory-bound decode) and
// PerRow the arithmetic of one more row. A step that decodes R sequences
// costs T0 = Fixed + PerRow*R and yields R tokens, T0/R each. Drafting a
// token for a request costs PerRow (its verification row) plus the
// proposer's time per drafted token: c times one token's share, c =
// (PerRow + proposer) / (T0/R). With alpha the request's per-token
// acceptance (a decayed count of accepted tokens over accepted tokens
// plus rejections: the maximum-likelihood rate of a geometric run), a
// draft of k tokens yields E(k) = 1 + alpha + ... + alpha^k tokens for
// 1 + k*c shares, so the request drafts the k <= MaxTokens that maximises
// E(k)/(1+k*c), and none when even that gains less than 2% over decoding
// alone: many sequences (T0/R shrinks towards PerRow), low acceptance, a
// costly proposer, or a small model whose forward is compute-bound (Fixed
// near PerRow, as for the 260K-parameter stories model, where k=4 n-gram
// drafts ran at 0.4x). Cost, when set, replaces the measured c.
//
// A request that stops drafting would never update its acceptance, so it
// probes with one drafted token after a backoff of steps (8, doubling to
// 128 while probes fail). Until the line is known (fewer than 4 steps of
// at least two distinct row counts), the policy drafts MaxTokens: the
// drafting steps themselves give the line its spread.
type Policy struct {
	MaxTokens int     // k's bound (engine: Speculation.Tokens)
	Cost      float64 // c, a drafted token's cost in decoded tokens' shares of a step; 0: measured

	line  costLine
	draft ewma // proposer seconds per drafted token
	reqs  map[string]*acceptance
}

// acceptance is one request's decayed verification record.
type acceptance struct {
	accepted, trials float64 // decayed: accepted tokens; accepted + rejections
	idle             int     // Tokens calls without drafting since the last draft
	backoff          int     // idle calls before the next probe
}

const (
	decay        = 0.9 // per observation, of the cost line and the proposer's cost
	acceptDecay  = 0.8 // per verified draft, of a request's counts: drafts are few, adapt fast
	priorAccept  = 1.0 // a new request starts at alpha = 1/2 ...
	priorTrials  = 2.0 // ... worth two observations
	firstBackoff = 8
	maxBackoff   = 128
	minGain      = 1.02 // tokens per unit cost a draft must promise over decoding alone
)

// NewPolicy returns a policy drafting at most maxTokens per request.
func NewPolicy(maxTokens int) *Policy {
	return &Policy{MaxTokens: maxTokens, reqs: map[string]*acceptance{}}
}

// ObserveStep records a target forward over rows rows that took d.
func (p *Policy) ObserveStep(rows int, d time.Duration) {
	if rows > 0 && d > 0 {
		p.line.add(float64(rows), d.Seconds())
	}
}

// ObserveDraft records a proposal of tokens drafted tokens (all requests
// of a step together) that took d.
func (p *Policy) ObserveDraft(tokens int, d time.Duration) {
	if tokens > 0 && d >= 0 {
		p.draft.add(d.Seconds() / float64(tokens))
	}
}

// ObserveVerify records that accepted of drafted tokens of request id's
// draft were accepted.
func (p *Policy) ObserveVerify(id string, drafted, accepted int) {
	if drafted <= 0 {
		return
	}
	a := p.get(id)
	a.accepted = acceptDecay*a.accepted + float64(accepted)
	a.trials = acceptDecay*a.trials + float64(accepted)
	if accepted < drafted {
		a.trials++ // the rejection that ended the run
	}
	switch {
	case accepted > 0:
		a.backoff = 0
	case a.backoff > 0:
		a.backoff = min(2*a.backoff, maxBackoff) // a failed probe: wait longer
	}
}

// Forget drops request id's record (it ended).
func (p *Policy) Forget(id string) { delete(p.reqs, id) }

// alpha is request id's estimated per-token acceptance (the prior for a
// request never seen).
func (p *Policy) alpha(id string) float64 {
	if a := p.reqs[id]; a != nil {
		return a.rate()
	}
	return priorAccept / priorTrials
}

func (a *acceptance) rate() float64 { return a.accepted / a.trials }

// Tokens is how many tokens request id drafts in a step that decodes
// running sequences (see the type's comment).
func (p *Policy) Tokens(id string, running int) int {
	a := p.get(id)
	k := p.best(a.rate(), max(running, 1))
	if k > 0 {
		a.idle = 0
		return k
	}
	// Not worth it now: probe after the backoff, once.
	if a.backoff == 0 {
		a.backoff = firstBackoff
	}
	if a.idle++; a.idle >= a.backoff {
		a.idle = 0
		return 1
	}
	return 0
}

// best is the draft length that maximises tokens per unit cost.
func (p *Policy) best(alpha float64, running int) int {
	c := p.Cost
	if c <= 0 {
		fixed, perRow, ok := p.line.fit()
		if !ok {
			return p.MaxTokens // no line yet: speculate, and learn from it
		}
		share := (fixed + perRow*float64(running)) / float64(running) // T0/R
		c = (perRow + p.draft.value()) / share
	}
	k, gain := BestTokens(alpha, c, p.MaxTokens)
	if gain < minGain {
		return 0
	}
	return k
}

// BestTokens is the k in [1, maxK] that maximises E(k)/(1+k*c), tokens
// per unit cost of a k-token draft at per-token acceptance alpha and
// relative cost c per drafted token, and that ratio (1: as decoding).
func BestTokens(alpha, c float64, maxK int) (k int, gain float64) {
	e, pow := 1.0, 1.0
	for j := 1; j <= maxK; j++ {
		pow *= alpha
		e += pow
		if g := e / (1 + float64(j)*c); g > gain {
			k, gain = j, g
		}
	}
	return k, gain
}

func (p *Policy) get(id string) *acceptance {
	a := p.reqs[id]
	if a == nil {
		a = &acceptance{accepted: priorAccept, trials: priorTrials}
		p.reqs[id] = a
	}
	return a
}

// costLine fits seconds = fixed + perRow*rows by least squares over
// decayed sums of the observations.
type costLine struct {
	n, x, y, xx, xy float64
	steps           int
	minX, maxX      float64
}

func (c *costLine) add(x, y float64) {
	c.n = decay*c.n + 1
	c.x = decay*c.x + x
	c.y = decay*c.y + y
	c.xx = decay*c.xx + x*x
	c.xy = decay*c.xy + x*y
	if c.steps == 0 || x < c.minX {
		c.minX = x
	}
	if c.steps == 0 || x > c.maxX {
		c.maxX = x
	}
	c.steps++
}

// fit returns the line, ok once it rests on two distinct row counts. A
// negative slope or intercept (noise) is clamped: rows never make a
// forward cheaper, and a forward is never free.
func (c *costLine) fit() (fixed, perRow float64, ok bool) {
	if c.steps < 4 || c.minX == c.maxX {
		return 0, 0, false
	}
	den := c.n*c.xx - c.x*c.x
	if den <= 1e-12*c.n*c.xx {
		return 0, 0, false // the recent rows are all alike
	}
	perRow = (c.n*c.xy - c.x*c.y) / den
	mean := c.y / c.n
	if perRow < 0 {
		perRow = 0
	}
	fixed = (c.y - perRow*c.x) / c.n
	if fixed < 0 {
		fixed, perRow = 0, mean/(c.x/c.n) // through the origin and the mean
	}
	if math.IsNaN(fixed) || math.IsNaN(perRow) {
		return 0, 0, false
	}
	return fixed, perRow, true
}

// ewma is a decayed mean (zero until the first value).
type ewma struct{ sum, n float64 }

func (e *ewma) add(v float64) { e.sum, e.n = decay*e.sum+v, decay*e.n+1 }

func (e *ewma) value() float64 {
	if e.n == 0 {
		return 0
	}
	return e.sum / e.n
}
