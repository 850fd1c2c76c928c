package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"kiln/sample"
	"kiln/sched"
)

// Beam search (Request.BeamWidth), as vLLM's beam_search: a client of
// the loop, above it. Each round, every live beam's sequence (the prompt,
// then the beam's tokens) is submitted as a request of one token whose
// sampler reports its 2W most likely tokens (raw log-probabilities,
// sample.Token.Top); the prefix cache serves what the last round
// computed (whole blocks, and a copy of the beam's partial last block,
// which its last round's request left cached when it ended), so a round
// computes each beam's newest token, and no more. A candidate ending in a stop token is a finished
// sequence, the others are ranked by
//
//	score = cumulative logprob / length^LengthPenalty      (length: prompt + generated tokens,
//	                                                        a final stop token not counted)
//
// and the W best become the next round's beams. After MaxTokens rounds
// (or the context's or the pool's limit, or when no candidate is left)
// the N best of the finished sequences and the last beams are delivered.
//
// A round's requests are groups of the search's own (group.sink: their
// events come back here, not to a reader), admitted together at the next
// intake; the round is due when every one has its final event, so the
// result does not depend on batching, preemption or memory pressure. The
// search's Usage counts the prompt positions its rounds computed.

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
	wait  int     // this round's requests without their final event
	ids   int     // round request ids issued
	ended bool

	cands []candidate // round scratch
}

// beam is one sequence of the search.
type beam struct {
	st       *stream // this round's request
	tokens   []int32
	logprobs []float32
	cum      float64
	score    float64
	stopped  bool                  // its last token is a stop token
	top      []sample.TokenLogprob // this round's candidates, the request's token event's Top
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
		params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 1, Logprobs: true, TopLogprobs: min(2*w, e.runner.Vocab())}}
	if _, err := sample.New(bs.params, e.runner.Vocab()); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	g.req.MaxTokens = limit
	return bs, nil
}

// startBeam submits the search's first round: the prompt alone.
func (e *Engine) startBeam(bs *beamSearch) {
	bs.beams = []*beam{{}}
	e.submitRound(bs)
}

// submitRound queues one request of one token for every beam, its
// sequence as the prompt, to be admitted at the next intake.
func (e *Engine) submitRound(bs *beamSearch) {
	g := bs.g
	for i, b := range bs.beams {
		sm, err := sample.New(bs.params, e.runner.Vocab()) // newBeamSearch made one already
		if err != nil {
			e.endBeam(bs, Abort, fmt.Errorf("engine: %w", err))
			return
		}
		bs.ids++
		id := g.req.ID + "#" + strconv.Itoa(bs.ids)
		r := &group{
			req:  sched.Request{ID: id, Prompt: slices.Concat(g.req.Prompt, b.tokens), MaxTokens: 1, Priority: g.req.Priority},
			ctx:  g.ctx,
			done: g.done,
			sink: func(_ *stream, ev Event) { e.roundEvent(bs, i, ev) },
			open: 1, now: g.now, submitted: g.now(), acct: g,
		}
		b.st = &stream{g: r, id: id, sampler: sm}
		r.members = []*stream{b.st}
		e.pending = append(e.pending, b.st)
	}
	bs.wait = len(bs.beams)
}

// roundEvent takes an event of beam i's request this round: its token's
// alternatives, then its end. The round is due when every request has
// ended; an aborted one (cancelled, a failed step, Close) ends the search.
func (e *Engine) roundEvent(bs *beamSearch, i int, ev Event) {
	if bs.ended {
		return
	}
	if !ev.Done {
		bs.beams[i].top = ev.Top // the event's own copy
		return
	}
	if ev.Reason == Abort {
		e.endBeam(bs, Abort, ev.Err)
		return
	}
	if bs.wait--; bs.wait > 0 {
		return
	}
	e.round(bs)
}

// score is vLLM's get_beam_search_score: cum / length^penalty.
func (bs *beamSearch) score(cum float64, length int) float64 {
	return cum / math.Pow(float64(length), bs.penalty)
}

// round ranks the candidates of every beam's sampled row and either ends
// the search, delivering its best sequences, or submits the next round.
func (e *Engine) round(bs *beamSearch) {
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
		return
	}

	next := make([]*beam, len(cands))
	for k, c := range cands {
		p := bs.beams[c.parent]
		next[k] = &beam{tokens: append(slices.Clip(p.tokens), c.tok), logprobs: append(slices.Clip(p.logprobs), c.lp), cum: c.cum, score: c.score}
	}
	bs.beams = next
	e.submitRound(bs)
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

// endBeam ends a search early (cancelled, failed, Close): its round's
// requests end (their blocks freed) and every completion gets a final
// event.
func (e *Engine) endBeam(bs *beamSearch, reason FinishReason, err error) {
	if bs.ended {
		return
	}
	bs.ended = true
	for _, b := range bs.beams {
		if b.st != nil {
			e.endGroup(b.st.g, Abort, err)
		}
	}
	bs.beams = nil
	e.publish()
	for _, st := range bs.g.members {
		e.ctr.Aborted++
		st.finish(reason, err)
	}
}
