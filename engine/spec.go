package engine

import (
	"fmt"

	"kiln/model"
	"kiln/runner"
	"kiln/sched"
	"kiln/spec"
)

// Speculative decoding (Config.Spec). Drafting is the last stage of a
// step, after the target's forward and the scheduler's Update (propose):
// every running request that decodes next and has not opted out
// (Request.NoSpec) gets a draft of up to Tokens tokens, from n-gram
// prompt lookup (Method "ngram", spec.NGram) or from a draft model
// (Method "draft": runner.Drafter, a small model of the same vocabulary,
// greedy, every request's passes batched, its KV kept in the target's
// block ids), and the drafts are stored on the requests
// (sched.Scheduler.SetDrafts, vLLM's update_draft_token_ids). The next
// step's plan reads them: a request's part of the ragged batch is then
// its last known token and the draft, a (k+1)-token chunk beside the
// other requests' decode tokens and prompt chunks. The runner samples
// the k+1 rows in turn with the request's own sampler and keeps drafted
// tokens while they equal the samples (runner.Runner: exact rejection
// sampling for a point-mass draft, so greedy and seeded requests give
// the very tokens they give without speculation); the scheduler commits
// the accepted tokens' KV and rolls the rejected ones back
// (sched.Scheduler.UpdateDrafts). Drafts are cut before a stop token and
// to the request's length limit; stop strings end a completion at the
// token that completes them, later accepted tokens dropped.
//
// Policy: drafts are made after a step that ends with at most MaxSeqs
// running requests (default 4), for the next. Below that a decode step is
// memory-bound (every weight is read once for a handful of rows), so
// verifying k more rows costs little more than one; with many sequences
// the step is already compute-bound and rejected drafts would be pure
// waste. Drafts take only the blocks and step budget left after every
// running request's token and the admissions (the scheduler decides, in
// Schedule): a draft never preempts nor delays another request. With
// Speculation.Adaptive (spec.Policy) each request's draft length is also
// chosen each step from its measured acceptance and the measured cost of
// a drafted token on this engine (a line fitted to the forwards' time
// against their rows, plus the draft model's passes): the k that
// maximises expected tokens per unit cost, or nothing, probing after a
// doubling backoff, when no draft pays (a compute-bound model, many
// sequences, drafts that fail). Without it every draft is up to Tokens
// long (Counters report acceptance either way). A draft model's cost is
// the draft forwards (Counters.DraftTime): k one-row passes per proposal,
// plus its share of every prompt chunk (which runs through the draft in
// all steps, so that speculation can start at once when the batch thins
// out).

// MaxSpecTokens bounds Speculation.Tokens (and the length of
// Counters.SpecAcceptedAt).
const MaxSpecTokens = 16

// Speculation configures speculative decoding; the zero value is off.
type Speculation struct {
	Method  string     // "" (off), "ngram" (prompt lookup, spec.NGram) or "draft" (a draft model, draft.go)
	Tokens  int        // k: drafted tokens per request and step, 1 to MaxSpecTokens; 0 means 4
	NGram   spec.NGram // n-gram lengths (zero: spec's defaults, 1 to 4)
	MaxSeqs int        // draft after steps that end with at most this many running requests; 0 means 4

	// Method "draft": the draft model, with the target's vocabulary. The
	// engine drives it (it must not be used elsewhere until Close) over a
	// KV store of its own: Config.NumBlocks blocks of Config.BlockSize
	// slots, the target's ids, plus a few scratch blocks, so the KV
	// memory of one block id is the target's KVBytesPerBlock plus the
	// draft's (size NumBlocks from their sum, as assemble does). Load it
	// with the target's worker pool (model.Options.Pool) so the two share
	// the cores.
	Draft *model.Model
	// Adaptive turns on the acceptance- and cost-aware policy
	// (spec.Policy): each request drafts the number of tokens, up to
	// Tokens, that its acceptance so far makes worth their cost, measured
	// on this engine's own forwards, and stops drafting (probing after a
	// growing backoff) when none is.
	Adaptive bool
	// DraftCost, if positive, replaces the adaptive policy's measured
	// cost of a drafted token (its proposal and its verifying row) in
	// decoded tokens' shares of a step (spec.Policy.Cost).
	DraftCost float64

	// DraftBackend replaces Draft with any runner.Backend (a scripted
	// model in tests): it must accept block ids up to Config.NumBlocks
	// plus the drafter's scratch blocks (runner.DrafterConfig.ScratchBlocks,
	// for min(MaxSeqs, Config.MaxSeqs) asks).
	DraftBackend runner.Backend
}

// fill checks s and sets its defaults.
func (s *Speculation) fill() error {
	switch s.Method {
	case "":
		return nil
	case "ngram":
	case "draft":
		if s.Draft == nil && s.DraftBackend == nil {
			return fmt.Errorf("engine: speculative method draft needs Speculation.Draft")
		}
	default:
		return fmt.Errorf("engine: speculative method %q; want ngram or draft", s.Method)
	}
	if s.Tokens == 0 {
		s.Tokens = 4
	}
	if s.MaxSeqs == 0 {
		s.MaxSeqs = 4
	}
	if s.Tokens < 1 || s.Tokens > MaxSpecTokens || s.MaxSeqs < 0 || !(s.DraftCost >= 0 && s.DraftCost < 1e6) {
		return fmt.Errorf("engine: speculation %+v: want 1 to %d tokens and MaxSeqs >= 0", *s, MaxSpecTokens)
	}
	g, err := s.NGram.Resolved()
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	s.NGram = g
	return nil
}

// propose is a step's last stage (after the forward and Update): in a
// step that ends with at most Spec.MaxSeqs running requests, it drafts
// for every live request that decodes next and has not opted out, and
// stores the drafts on them for the next step (sched.Scheduler.SetDrafts:
// the scheduler fits them into the next plan). A failed draft forward
// ends the requests it was drafting for.
func (e *Engine) propose() {
	if e.cfg.Spec.Method == "" {
		return
	}
	d := e.drafter
	if d != nil {
		d.Passes, d.PassTime = 0, 0
	}
	running := e.sched.NumRunning()
	if running == 0 || running > e.cfg.Spec.MaxSeqs {
		return
	}
	asks := e.sched.DraftAsks(e.asks[:0])
	defer func() {
		clear(asks)
		e.asks = asks[:0]
	}()
	if p := e.policy; p != nil {
		for i := range asks {
			if e.wants(asks[i].ID) {
				asks[i].Max = min(asks[i].Max, p.Tokens(asks[i].ID, running))
			}
		}
	}
	if d != nil {
		if err := d.Propose(asks, e.wantsDraft); err != nil {
			for _, a := range asks {
				if g := e.groupOf(a.ID); g != nil {
					e.endGroup(g, Abort, err)
				}
			}
			return
		}
	} else {
		e.draft = e.draft[:0]
		for i := range asks {
			a := &asks[i]
			if !e.wantsDraft(a) {
				continue
			}
			// Every draft in one scratch slice: the scheduler copies them.
			at := len(e.draft)
			e.draft = e.cfg.Spec.NGram.Propose(e.draft, a.Tokens, min(a.Max, e.cfg.Spec.Tokens))
			a.Draft = e.draft[at:len(e.draft):len(e.draft)]
		}
	}
	e.sched.SetDrafts(asks)
}

// wantsDraft reports whether ask a is to be drafted: room for a token
// and a live request that has not opted out. Set once in build (a method
// value made each step would allocate).
func (e *Engine) wantsAsk(a *sched.DraftAsk) bool { return a.Max >= 1 && e.wants(a.ID) }

// wants reports whether live request id may speculate (not opted out).
func (e *Engine) wants(id string) bool {
	st := e.live[id]
	return st != nil && !st.g.noSpec
}

// observeSpec feeds a step to the adaptive policy: the forward's rows and
// time, the draft model's passes, and each verified draft's outcome.
func (e *Engine) observeSpec(plan *sched.Plan, out *runner.Output) {
	p := e.policy
	if p == nil {
		return
	}
	// The line is fitted to decode and verify steps only: a prompt chunk's
	// rows run as a compute-bound GEMM whose cost per row says nothing of
	// a few more rows on a memory-bound decode.
	decoding := true
	for _, q := range plan.Seqs {
		decoding = decoding && q.Sample && len(q.Tokens) == 1+q.Draft && q.Start > 0
	}
	if decoding {
		p.ObserveStep(plan.NumTokens, out.Forward)
	}
	drafted := 0
	for i, q := range plan.Seqs {
		p.ObserveVerify(q.ID, q.Draft, int(out.Accepted[i]))
		drafted += q.Draft
	}
	if d := e.drafter; d != nil && d.Passes > 0 {
		p.ObserveDraft(drafted, d.PassTime)
	}
}

// countDrafts adds a step's drafts to the counters: accepted[i] of
// drafted[i] tokens.
func (c *Counters) countDrafts(drafted int, accepted int32) {
	if drafted == 0 {
		return
	}
	c.SpecDrafts++
	c.SpecDraftTokens += int64(drafted)
	c.SpecAcceptedTokens += int64(accepted)
	for j := range int(accepted) {
		c.SpecAcceptedAt[j]++
	}
}
