package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"kiln/sample"
)

// Beam search (Request.BeamWidth), as vLLM's beam_search: each round,
// every live beam's next-token row gives its 2W most likely tokens (raw
// log-probabilities, the members' greedy samplers' Top); a candidate
// ending in a stop token is a finished sequence, the others are ranked by
//
//	score = cumulative logprob / length^LengthPenalty      (length: prompt + generated tokens,
//	                                                        a final stop token not counted)
//
// and the W best become the next round's beams. After MaxTokens rounds
// (or the context's or the pool's limit, or when no candidate is left)
// the N best of the finished sequences and the last beams are delivered.
//
// The beams are scheduler requests (sched.Request.Beam) sharing KV
// blocks: a beam kept once continues in place (sched.Continue), a beam
// kept k > 1 times is branched k-1 times onto its blocks (sched.Branch:
// copy-on-write of the partial block only), a beam not kept is aborted
// and its blocks freed at once. A round waits until every live beam has
// sampled (a preempted beam is recomputed first), so the result does not
// depend on batching or memory pressure.

// maxBeamWidth bounds Request.BeamWidth: a round reads 2W alternatives of
// each beam's row, sample.MaxTopLogprobs at most.
const maxBeamWidth = sample.MaxTopLogprobs / 2

// beamSearch is one request's search, owned by the loop once admitted.
type beamSearch struct {
	g       *group
	width   int
	n       int     // sequences delivered at the end
	penalty float64 // LengthPenalty
	prompt  int     // prompt tokens
	limit   int     // tokens a sequence may generate
	params  sample.Params

	beams []*beam // live, best first
	done  []*beam // ended with a stop token, best first, at most n
	wait  int     // live beams that have not sampled this round
	ids   int     // member ids issued
	ended bool

	cands []candidate // round scratch
}

// beam is one sequence of the search.
type beam struct {
	id       string // the scheduler's and runner's
	tokens   []int32
	logprobs []float32
	cum      float64
	score    float64
	stopped  bool                  // its last token is a stop token
	sampled  bool                  // top is this round's
	top      []sample.TokenLogprob // this round's candidates, a copy of the sampler's Top
}

// candidate is one continuation of a beam in a round.
type candidate struct {
	parent int // index in beams
	tok    int32
	lp     float32
	cum    float64
	score  float64
}

// newBeamSearch checks a beam search request and sets its search up; n
// is the number of sequences to deliver (Request.N, at least 1).
func (e *Engine) newBeamSearch(g *group, req Request, n int) (*beamSearch, error) {
	p := req.Params
	w := req.BeamWidth
	switch {
	case w > maxBeamWidth || w > e.cfg.MaxSeqs:
		return nil, refuse("BeamWidth", "beam width %d; at most %d and Config.MaxSeqs = %d", w, maxBeamWidth, e.cfg.MaxSeqs)
	case n > w:
		return nil, refuse("N", "n = %d sequences of a beam search of width %d", n, w)
	case p.MaxTokens <= 0:
		return nil, refuse("Params", "beam search needs Params.MaxTokens > 0")
	case math.IsNaN(req.LengthPenalty) || math.IsInf(req.LengthPenalty, 0):
		return nil, refuse("LengthPenalty", "length penalty %v", req.LengthPenalty)
	case p.RepetitionPenalty != 1 || p.PresencePenalty != 0 || p.FrequencyPenalty != 0 || len(p.LogitBias) > 0:
		return nil, refuse("Params", "beam search scores raw log-probabilities: penalties and logit bias do not apply")
	case len(p.Stop) > 0 || p.TopLogprobs > 0 || req.PromptLogits > 0:
		return nil, refuse("Params", "beam search takes no stop strings, top logprobs or prompt logits")
	}
	if req.Constraint != nil {
		return nil, refuse("Constraint", "beam search takes no output constraint")
	}
	if err := p.Validate(); err != nil {
		return nil, &RequestError{Field: "Params", Reason: err.Error(), Err: err}
	}
	prompt := len(g.req.Prompt)
	capacity := e.cfg.NumBlocks * e.cfg.BlockSize
	limit := min(p.MaxTokens, e.cfg.MaxModelLen-prompt, capacity-prompt)
	if blocks := (prompt + limit + e.cfg.BlockSize - 1) / e.cfg.BlockSize; w*blocks > e.cfg.NumBlocks {
		return nil, refuse("BeamWidth", "%d beams of up to %d tokens could need %d KV blocks; the pool has %d", w, prompt+limit, w*blocks, e.cfg.NumBlocks)
	}
	if n*limit > e.cfg.StreamBuffer {
		return nil, refuse("N", "%d beam search sequences of up to %d tokens are delivered at once: more than Config.StreamBuffer = %d events", n, limit, e.cfg.StreamBuffer)
	}
	penalty := req.LengthPenalty
	if penalty == 0 {
		penalty = 1
	}
	bs := &beamSearch{g: g, width: w, n: n, penalty: penalty, prompt: prompt, limit: limit,
		params: sample.Params{TopP: 1, RepetitionPenalty: 1, Logprobs: true, TopLogprobs: min(2*w, e.runner.Vocab())}}
	if _, err := sample.New(bs.params, e.runner.Vocab()); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	g.req.MaxTokens = limit
	g.req.Beam, g.req.Width = true, w
	return bs, nil
}

// admitBeam queues the search's first beam, the prompt.
func (e *Engine) admitBeam(bs *beamSearch) error {
	g := bs.g
	if err := e.sched.Add(g.req); err != nil {
		bs.ended = true
		return fmt.Errorf("engine: %w", err)
	}
	if err := e.addMember(bs, g.req.ID); err != nil {
		e.sched.Abort(g.req.ID) // retire drops the rest
		bs.ended = true
		return err
	}
	bs.beams = []*beam{{id: g.req.ID}}
	bs.wait = 1
	return nil
}

// addMember gives beam member id its sampler in the runner.
func (e *Engine) addMember(bs *beamSearch, id string) error {
	sm, err := sample.New(bs.params, e.runner.Vocab())
	if err == nil {
		err = e.runner.Add(id, bs.g.req.Prompt, sm)
	}
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	e.beams[id] = bs
	return nil
}

// dropMember frees beam member id's blocks (and, at the next retire, its
// sampler).
func (e *Engine) dropMember(id string) {
	e.sched.Abort(id)
	delete(e.beams, id)
}

// sampled records member id's row of this round (tok.Top, copied) and
// reports whether every live beam has one: the round is due.
func (bs *beamSearch) sampled(id string, tok sample.Token) bool {
	for _, b := range bs.beams {
		if b.id != id {
			continue
		}
		if !b.sampled {
			b.sampled = true
			bs.wait--
		}
		b.top = append(b.top[:0], tok.Top...) // a recompute after a preemption gives the same row
		break
	}
	return bs.wait == 0 && len(bs.beams) > 0
}

// score is vLLM's get_beam_search_score: cum / length^penalty.
func (bs *beamSearch) score(cum float64, length int) float64 {
	return cum / math.Pow(float64(length), bs.penalty)
}

// round ranks the candidates of every beam's sampled row and either ends
// the search, delivering its best sequences, or moves the beams on.
func (e *Engine) round(bs *beamSearch) error {
	gen := len(bs.beams[0].tokens) + 1 // tokens of each candidate
	stop := bs.g.req.Stop
	cands := bs.cands[:0]
	for i, b := range bs.beams {
		for _, c := range b.top {
			cum := b.cum + float64(c.Logprob)
			if slices.Contains(stop, c.ID) {
				bs.finished(&beam{tokens: append(slices.Clip(b.tokens), c.ID), logprobs: append(slices.Clip(b.logprobs), c.Logprob),
					cum: cum, score: bs.score(cum, bs.prompt+gen-1), stopped: true})
				continue
			}
			cands = append(cands, candidate{parent: i, tok: c.ID, lp: c.Logprob, cum: cum, score: bs.score(cum, bs.prompt+gen)})
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
	cands = cands[:min(len(cands), bs.width)]
	bs.cands = cands

	if gen >= bs.limit || len(cands) == 0 {
		for _, c := range cands {
			p := bs.beams[c.parent]
			bs.finished(&beam{tokens: append(slices.Clip(p.tokens), c.tok), logprobs: append(slices.Clip(p.logprobs), c.lp), cum: c.cum, score: c.score})
		}
		e.deliver(bs)
		return nil
	}

	// Keep: a beam's first candidate continues it in place, its others
	// branch from it; beams without one are pruned first (their seats and
	// blocks go back before the branches take theirs).
	first := make([]int, len(bs.beams))
	for i := range first {
		first[i] = -1
	}
	for k, c := range cands {
		if first[c.parent] < 0 {
			first[c.parent] = k
		}
	}
	for i, b := range bs.beams {
		if first[i] < 0 {
			e.dropMember(b.id)
		}
	}
	next := make([]*beam, len(cands))
	for k, c := range cands {
		if first[c.parent] == k {
			continue
		}
		p := bs.beams[c.parent]
		id := bs.g.req.ID + "#" + strconv.Itoa(bs.ids+1)
		bs.ids++
		if err := e.sched.Branch(p.id, id, c.tok); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		if err := e.addMember(bs, id); err != nil {
			e.sched.Abort(id)
			return err
		}
		next[k] = &beam{id: id, tokens: append(slices.Clip(p.tokens), c.tok), logprobs: append(slices.Clip(p.logprobs), c.lp), cum: c.cum, score: c.score}
	}
	for i, b := range bs.beams {
		k := first[i]
		if k < 0 {
			continue
		}
		if err := e.sched.Continue(b.id, cands[k].tok); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		b.tokens, b.logprobs = append(b.tokens, cands[k].tok), append(b.logprobs, cands[k].lp)
		b.cum, b.score, b.sampled = cands[k].cum, cands[k].score, false
		next[k] = b
	}
	bs.beams, bs.wait = next, len(next)
	return nil
}

// finished adds a finished sequence, keeping the n best (ties: the
// earlier first, as a stable sort of vLLM's list would).
func (bs *beamSearch) finished(b *beam) {
	i := len(bs.done)
	for i > 0 && bs.done[i-1].score < b.score {
		i--
	}
	if i < bs.n {
		bs.done = slices.Insert(bs.done, i, b)
		bs.done = bs.done[:min(len(bs.done), bs.n)]
	}
}

// deliver sends the n best finished sequences, each as its token events
// and its final event (Stop when it ends with a stop token, else Length),
// and ends the search.
func (e *Engine) deliver(bs *beamSearch) {
	for _, b := range bs.beams {
		e.dropMember(b.id)
	}
	bs.beams, bs.ended = nil, true
	e.publish() // a reader who sees the final event sees the blocks freed
	for i, st := range bs.g.members {
		if i >= len(bs.done) { // fewer sequences than asked for (a tiny vocabulary)
			e.ctr.Finished++
			st.finish(Length, nil)
			continue
		}
		b := bs.done[i]
		for j, tok := range b.tokens {
			st.token(sample.Token{ID: tok, Logprob: b.logprobs[j]}, j == len(b.tokens)-1, nil) // fits: Submit checked n*limit
		}
		st.cum = b.cum
		reason := Length
		if b.stopped {
			reason = Stop
		}
		e.ctr.Finished++
		st.finish(reason, nil)
	}
}

// endBeam ends a search early (cancelled, failed, Close): its members'
// blocks are freed and every completion gets a final event.
func (e *Engine) endBeam(bs *beamSearch, reason FinishReason, err error) {
	for _, b := range bs.beams {
		e.dropMember(b.id)
	}
	bs.beams = nil
	if bs.ended {
		return
	}
	bs.ended = true
	e.publish()
	for _, st := range bs.g.members {
		e.ctr.Aborted++
		st.finish(reason, err)
	}
}
