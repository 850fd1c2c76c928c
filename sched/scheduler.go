package sched

import (
	"fmt"
	"slices"

	"kiln/kvcache"
)

// Config bounds each step.
type Config struct {
	MaxBatchedTokens int // new tokens per step over all requests
	MaxSeqs          int // running requests at most
	MaxModelLen      int // context length in tokens
}

// Scheduler is a pure, deterministic state machine: no goroutines, no
// clock, no model. Each step the engine loop calls Schedule, runs the
// plan's forward, then calls Update with the sampled tokens. It is not
// safe for concurrent use: the loop owns it.
type Scheduler struct {
	cfg     Config
	pool    *kvcache.Pool
	waiting waiting
	running []*request // admission order
	byID    map[string]*request
	forkOf  map[string]*request // a completion not yet forked -> its parent
	retired []string            // ids that left since the last Retired
	arrived int64
	step    int
	marks   int // seatsHeld's counting passes

	// Scratch reused by every Schedule and Update (see Schedule).
	plan   Plan
	seqs   []Seq            // candidate entries; Tokens nil where a preemption undid one
	copies [][]kvcache.Copy // block copies of each candidate entry
	runs   []*request       // the running queue as the step began
	entry  map[*request]int // index in seqs of a running request's entry
	events []Event
}

// New returns a scheduler that places requests' KV in pool.
func New(cfg Config, pool *kvcache.Pool) (*Scheduler, error) {
	if cfg.MaxBatchedTokens <= 0 || cfg.MaxSeqs <= 0 || cfg.MaxModelLen <= 0 {
		return nil, fmt.Errorf("sched: MaxBatchedTokens, MaxSeqs and MaxModelLen must be positive (got %+v)", cfg)
	}
	return &Scheduler{cfg: cfg, pool: pool, byID: map[string]*request{}, forkOf: map[string]*request{}, entry: map[*request]int{}}, nil
}

// Add queues a request. It refuses, with an error, a request that could
// never run: an empty prompt, a duplicate id, or a prompt that leaves no
// room for an output token in the context or in the whole pool.
func (s *Scheduler) Add(req Request) error {
	capacity := s.pool.NumBlocks() * s.pool.BlockSize()
	switch n := len(req.Prompt); {
	case n == 0:
		return fmt.Errorf("sched: request %q has an empty prompt", req.ID)
	case s.byID[req.ID] != nil:
		return fmt.Errorf("sched: request %q is already queued", req.ID)
	case 1+len(req.Forks) > s.cfg.MaxSeqs:
		return fmt.Errorf("sched: request %q asks for %d completions; at most %d run at once", req.ID, 1+len(req.Forks), s.cfg.MaxSeqs)
	case req.MaxTokens < 0:
		return fmt.Errorf("sched: request %q has max tokens %d", req.ID, req.MaxTokens)
	case req.ComputeTail < 0 || req.ComputeTail > n:
		return fmt.Errorf("sched: request %q computes the last %d tokens of a %d-token prompt", req.ID, req.ComputeTail, n)
	case req.Beam && len(req.Forks) > 0:
		return fmt.Errorf("sched: request %q is a beam search with forks", req.ID)
	case req.Beam && (req.Width < 1 || req.Width > s.cfg.MaxSeqs):
		return fmt.Errorf("sched: request %q: beam width %d; want 1 up to %d", req.ID, req.Width, s.cfg.MaxSeqs)
	case n >= s.cfg.MaxModelLen:
		return fmt.Errorf("sched: request %q: prompt of %d tokens leaves no room in the %d-token context", req.ID, n, s.cfg.MaxModelLen)
	case n >= capacity:
		return fmt.Errorf("sched: request %q: prompt of %d tokens does not fit the KV cache's %d token slots", req.ID, n, capacity)
	}
	maxLen := min(s.cfg.MaxModelLen, capacity)
	if req.MaxTokens > 0 {
		maxLen = min(maxLen, len(req.Prompt)+req.MaxTokens)
	}
	for i, f := range req.Forks {
		if f == req.ID || s.byID[f] != nil || s.forkOf[f] != nil || slices.Contains(req.Forks[:i], f) {
			return fmt.Errorf("sched: request %q: completion id %q is already in use", req.ID, f)
		}
	}
	req.Prompt = slices.Clone(req.Prompt)
	req.Forks = slices.Clone(req.Forks)
	r := &request{Request: req, arrival: s.arrived, tokens: slices.Clone(req.Prompt), maxLen: maxLen}
	if req.Beam {
		r.search = &search{width: req.Width, members: 1}
	}
	s.arrived++
	s.byID[req.ID] = r
	for _, f := range req.Forks {
		s.forkOf[f] = r
	}
	s.waiting.push(r)
	return nil
}

// Abort drops a request, waiting or running, and frees its blocks now. It
// reports whether the request was known. A plan that still names it is
// ignored for it by Update. A completion not yet forked is dropped from
// its parent's forks.
func (s *Scheduler) Abort(id string) bool {
	if p := s.forkOf[id]; p != nil {
		p.Forks = slices.DeleteFunc(p.Forks, func(f string) bool { return f == id })
		delete(s.forkOf, id)
		s.retired = append(s.retired, id)
		return true
	}
	r := s.byID[id]
	if r == nil {
		return false
	}
	s.drop(r)
	return true
}

// drop removes r from its queue and the pool.
func (s *Scheduler) drop(r *request) {
	if r.running {
		s.running = slices.DeleteFunc(s.running, func(x *request) bool { return x == r })
		s.pool.Free(r.ID)
		r.running = false
		if r.search != nil {
			r.search.running--
		}
	} else {
		s.waiting.remove(r)
	}
	if r.search != nil {
		r.search.members--
	}
	delete(s.byID, r.ID)
	s.retired = append(s.retired, r.ID)
	for _, f := range r.Forks {
		delete(s.forkOf, f)
	}
	s.retired = append(s.retired, r.Forks...)
	r.Forks = nil
}

// Retired appends to dst, and returns, the ids of the requests that left
// the scheduler since the last call: finished by Update (a stop token,
// the length limit), aborted (Abort), and the completions of either not
// yet forked. The scheduler is the registry of live requests: what else
// keeps state per request (the engine's runner, its draft model, its
// speculation policy) drops these ids.
func (s *Scheduler) Retired(dst []string) []string {
	dst = append(dst, s.retired...)
	clear(s.retired)
	s.retired = s.retired[:0]
	return dst
}

// DraftAsk is a running request that decodes in the next step, a
// candidate for a draft (speculative decoding): DraftAsks lists them after
// Update, the caller proposes and hands the drafts back with SetDrafts.
type DraftAsk struct {
	ID     string
	Tokens []int32 // the request's known tokens (prompt, then output); the last is the next step's decode token
	Max    int     // draft at most this many tokens (the length limit: the accepted draft and the sample after it must fit), >= 1
	// Table is the request's block table as it stands: it covers the
	// committed tokens, len(Tokens)-1 of them (the next step's decode
	// allocates the last token's slot). A view of the pool's, valid until
	// the next Schedule.
	Table []int32
	// Draft is the proposal (nil: none), set by the caller; SetDrafts
	// copies it, so it may be the caller's scratch.
	Draft []int32
}

// DraftAsks appends to dst, and returns, an ask for every running request
// that decodes an output token in the next step (not a prompt's last
// token, not a beam member) and has room for a drafted token: the
// candidates for speculative decoding. Call it after Update, before the
// next Schedule.
func (s *Scheduler) DraftAsks(dst []DraftAsk) []DraftAsk {
	for _, r := range s.running {
		if r.Beam || r.output() == 0 || !r.decoding() {
			continue // beams; a prompt's last token (its row may feed forks)
		}
		// The accepted draft and the sample after it must fit r's length limit.
		if m := r.maxLen - len(r.tokens) - 1; m > 0 {
			dst = append(dst, DraftAsk{ID: r.ID, Tokens: r.tokens, Max: m, Table: s.pool.TableView(r.ID)})
		}
	}
	return dst
}

// SetDrafts stores each ask's Draft on its request for the next Schedule
// (vLLM's update_draft_token_ids): that step then carries the request's
// last known token and as much of the draft as fits (Seq.Draft), and
// UpdateDrafts takes how many drafted tokens the runner accepted. A
// draft is cut before its first stop token and to the request's length
// limit and what is left of the step's token budget after every running
// request's token and the admissions, the drafts taking it in running
// order;
// a request whose draft does not fit the free blocks goes without: a
// draft never preempts nor delays a request. Asks of requests that no
// longer decode next are ignored; a draft lasts one Schedule.
func (s *Scheduler) SetDrafts(asks []DraftAsk) {
	for _, a := range asks {
		if r := s.byID[a.ID]; r != nil && r.running && !r.Beam && r.output() > 0 && r.decoding() {
			r.spec = append(r.spec[:0], a.Draft...)
		}
	}
}

// cut is d cut to max tokens and before its first stop token of r (a
// stop token ends r: its own sample decides it).
func cut(r *request, d []int32, max int) []int32 {
	d = d[:min(len(d), max)]
	for i, t := range d {
		if slices.Contains(r.Stop, t) {
			return d[:i]
		}
	}
	return d
}

// NumWaiting and NumRunning are the queue lengths.
func (s *Scheduler) NumWaiting() int { return len(s.waiting) }
func (s *Scheduler) NumRunning() int { return len(s.running) }

// Done reports whether no request is queued or running.
func (s *Scheduler) Done() bool { return len(s.byID) == 0 }

// Schedule plans one step within the token and sequence budgets:
//  1. running requests that decode (one token each),
//  2. running requests mid-prompt (a chunk each, as the budget allows),
//  3. waiting requests, in order, while they fit (after their cached prefix).
//
// When the pool cannot hold a running request's tokens, the lowest
// priority, newest running request is preempted (its blocks freed, itself
// back in the waiting queue to be recomputed) until it can; no waiting
// request is admitted in a step that preempted so.
//
// A waiting request that does not fit (blocks or seats) preempts running
// requests of a strictly lower priority, lowest and newest first, as long
// as what they hold could make it fit (vLLM's priority scheduling); among
// equal priorities it waits (first come, first served: no overtaking).
// Held beam members (see beam.go) are not admitted, and when nothing else
// would run they are preempted to make room for the waiting head.
//
// The plan's slices (and the block tables in it, views of the pool's) are
// the scheduler's scratch: they are valid until the next Schedule, so a
// plan must be run and passed to Update before the next is made. A
// steady decode step allocates nothing here.
func (s *Scheduler) Schedule() Plan {
	s.step++
	plan := Plan{Step: s.step, Seqs: s.plan.Seqs[:0], Copies: s.plan.Copies[:0], Preempted: s.plan.Preempted[:0], Forks: s.plan.Forks[:0]}
	budget := s.cfg.MaxBatchedTokens
	seqs, copies := s.seqs[:0], s.copies[:0]
	clear(s.entry)
	live := 0 // entries of seqs not undone by a preemption

	schedule := func(r *request, n int, a kvcache.Alloc) {
		s.entry[r] = len(seqs)
		end := r.computed + n
		seqs = append(seqs, Seq{ID: r.ID, Start: r.computed, Tokens: r.tokens[r.computed:end:end],
			Table: s.pool.TableView(r.ID), Sample: end == len(r.tokens)})
		copies = append(copies, a.Copies)
		budget -= n
		live++
	}
	preempt := func(v *request) {
		if i, ok := s.entry[v]; ok {
			budget += len(seqs[i].Tokens)
			seqs[i], copies[i] = Seq{}, nil
			delete(s.entry, v)
			live--
		}
		s.running = slices.DeleteFunc(s.running, func(x *request) bool { return x == v })
		s.pool.Free(v.ID)
		v.running, v.computed, v.spec = false, 0, v.spec[:0]
		if v.search != nil {
			v.search.running--
		}
		s.waiting.push(v)
		plan.Preempted = append(plan.Preempted, v.ID)
	}

	s.runs = append(s.runs[:0], s.running...)
	for _, decodes := range [2]bool{true, false} {
		for _, r := range s.runs {
			if !r.running || r.idle() || r.decoding() != decodes || budget == 0 {
				continue
			}
			n := min(len(r.tokens)-r.computed, budget)
			for r.running {
				if _, ok := s.pool.CanAllocate(r.ID, r.tokens, n); ok {
					break
				}
				// A held beam member computes nothing until its whole
				// search has sampled, yet holds blocks: it gives them up
				// first (unless it outranks r). Taking the newest request
				// instead can be r itself, again and again, while the
				// held member waits for a sibling queued behind r: a
				// livelock FuzzScheduler found (testdata/fuzz/FuzzScheduler/livelock).
				v := s.victim(func(x *request) bool { return x.held && x.Priority >= r.Priority })
				if v == nil {
					v = s.victim(nil)
				}
				preempt(v)
			}
			if r.running {
				a, _ := s.pool.Allocate(r.ID, r.tokens, n)
				schedule(r, n, a)
			}
		}
	}
	clear(s.runs)
	preempted := len(plan.Preempted) > 0 // a running request lacked blocks: admit nothing
	for i := 0; !preempted && i < len(s.waiting) && budget > 0; {
		r := s.waiting[i]
		if r.held {
			i++ // sampled already: needs no step until it is continued
			continue
		}
		look := r.lookup()
		n := min(len(r.tokens)-s.pool.CachedPrefix(look), budget)
		need, fits := s.pool.CanAllocate(r.ID, look, n)
		seated := s.seatsHeld(nil)+seats(r) <= s.cfg.MaxSeqs
		if fits && seated {
			a, _ := s.pool.Allocate(r.ID, look, n)
			s.waiting = slices.Delete(s.waiting, i, i+1)
			r.running, r.computed = true, a.Cached
			s.running = append(s.running, r)
			if r.search != nil {
				r.search.running++
			}
			schedule(r, n, a)
			continue
		}
		if v := s.victim(nil); v != nil && v.Priority > r.Priority && s.reclaimable(r, need, seats(r)) {
			preempt(v) // priority preemption: v waits behind r
			continue
		}
		if v := s.victim(func(x *request) bool { return x.held }); live == 0 && v != nil {
			preempt(v) // nothing else runs: a held beam member makes room
			continue
		}
		break // first come, first served: no overtaking
	}

	// Drafts go to decodes once every running request has its blocks and
	// the waiting ones were admitted, so they take only what is left over
	// and never cause a preemption or delay an admission.
	budget = s.drafts(seqs, budget)
	for i, q := range seqs {
		if q.Tokens == nil { // undone by a preemption
			continue
		}
		if r := s.byID[q.ID]; q.Sample && r.output() == 0 {
			for _, f := range r.Forks {
				plan.Forks = append(plan.Forks, Fork{ID: f, Seq: len(plan.Seqs)})
			}
		}
		plan.Seqs = append(plan.Seqs, q)
		plan.Copies = append(plan.Copies, copies[i]...)
		plan.NumTokens += len(q.Tokens)
	}
	clear(copies)
	s.seqs, s.copies, s.plan = seqs, copies, plan
	return plan
}

// drafts adds the drafts stored by SetDrafts to this step's decodes
// (seqs: the step's entries so far) within budget tokens, allocates those
// that fit and returns the budget left. In running order, each draft is
// cut to what its request's length limit and the budget left allow and
// takes its length from the budget. Every stored draft is spent: a draft
// is for one step.
func (s *Scheduler) drafts(seqs []Seq, budget int) int {
	for _, r := range s.running {
		spec := r.spec
		r.spec = r.spec[:0]
		i, ok := s.entry[r]
		if len(spec) == 0 || !ok || r.Beam || r.output() == 0 {
			continue // no draft; beams; a prompt's last token (its row may feed forks)
		}
		if q := &seqs[i]; len(q.Tokens) != 1 || !q.Sample {
			continue // not a decode
		}
		// The accepted draft and the sample after it must fit r's length limit.
		draft := cut(r, spec, min(r.maxLen-len(r.tokens)-1, budget))
		if len(draft) == 0 {
			continue
		}
		if _, ok := s.pool.CanAllocate(r.ID, r.tokens, 1+len(draft)); !ok {
			continue
		}
		// The decode's Allocate made the partial block private already:
		// growing the table copies nothing.
		s.pool.Allocate(r.ID, r.tokens, 1+len(draft))
		q := &seqs[i]
		r.chunk = append(append(r.chunk[:0], q.Tokens...), draft...)
		q.Tokens, q.Draft, q.Table = r.chunk, len(draft), s.pool.TableView(r.ID)
		budget -= len(draft)
	}
	return budget
}

// victim is the running request to preempt among those ok accepts (all
// when ok is nil): the lowest priority (highest value), newest among
// those; nil if there is none.
func (s *Scheduler) victim(ok func(*request) bool) *request {
	var v *request
	for _, r := range s.running {
		if (ok == nil || ok(r)) && (v == nil || before(v, r)) {
			v = r
		}
	}
	return v
}

// reclaimable reports whether preempting every running request of a
// lower priority than r could give r the blocks (need more than are free)
// and the seats it lacks: an upper bound (a shared block is not freed by
// one of its holders), so that a priority preemption is never hopeless.
func (s *Scheduler) reclaimable(r *request, need, seats int) bool {
	lower := func(v *request) bool { return v.Priority > r.Priority }
	blocks := s.pool.NumFree()
	for _, v := range s.running {
		if lower(v) {
			blocks += len(s.pool.TableView(v.ID))
		}
	}
	return blocks >= need && s.seatsHeld(lower)+seats <= s.cfg.MaxSeqs
}

// Update applies a step's results: sampled[i] is the token sampled for
// plan.Seqs[i] (read only where Sample is set), then sampled[len(plan.Seqs)+j]
// is plan.Forks[j]'s. It forks those completions, commits the computed
// tokens' KV, appends sampled tokens, and finishes requests on a stop
// token or their length limit, freeing their blocks. A beam member's
// sample appends nothing and finishes nothing: its event reports the
// sample and the member is held (see beam.go). Entries of requests
// aborted since Schedule are skipped. The events are valid until the next
// Update.
func (s *Scheduler) Update(plan Plan, sampled []int32) ([]Event, error) {
	return s.UpdateDrafts(plan, sampled, nil)
}

// UpdateDrafts is Update for a plan with drafts (Seq.Draft > 0):
// accepted[i] is how many of plan.Seqs[i]'s drafted tokens the runner
// accepted (0 to Draft; read only where Draft > 0), sampled[i] the token
// it sampled after them. The last known token and the accepted drafts are
// committed, the rejected ones' KV rolled back (kvcache.Pool.Truncate),
// and each accepted token gets its event (Event.Draft) before the
// sample's; a stop token or the length limit among them ends the request
// there, the later tokens dropped.
func (s *Scheduler) UpdateDrafts(plan Plan, sampled, accepted []int32) ([]Event, error) {
	if len(sampled) != len(plan.Seqs)+len(plan.Forks) {
		return nil, fmt.Errorf("sched: step %d planned %d sequences and %d forks but got %d samples", plan.Step, len(plan.Seqs), len(plan.Forks), len(sampled))
	}
	for i, q := range plan.Seqs {
		if q.Draft == 0 {
			continue
		}
		if len(accepted) != len(plan.Seqs) {
			return nil, fmt.Errorf("sched: step %d has drafts but got %d accepted counts for %d sequences", plan.Step, len(accepted), len(plan.Seqs))
		}
		if a := accepted[i]; a < 0 || int(a) > q.Draft {
			return nil, fmt.Errorf("sched: step %d: %q accepted %d of %d drafted tokens", plan.Step, q.ID, a, q.Draft)
		}
	}
	events := s.events[:0]
	defer func() { s.events = events[:0] }()
	for i, q := range plan.Seqs {
		r := s.byID[q.ID]
		if r == nil || !r.running || r.computed != q.Start {
			continue
		}
		known, acc := len(q.Tokens)-q.Draft, 0
		if q.Draft > 0 {
			acc = int(accepted[i])
		}
		if err := s.pool.Commit(r.ID, q.Tokens[:known+acc]); err != nil {
			return events, fmt.Errorf("sched: step %d: %w", plan.Step, err)
		}
		if acc < q.Draft {
			// Roll the rejected tokens back: their slots were written, but
			// only committed tokens count, and blocks past them are freed.
			if err := s.pool.Truncate(r.ID, s.pool.Len(r.ID)); err != nil {
				return events, fmt.Errorf("sched: step %d: %w", plan.Step, err)
			}
		}
		r.computed += known + acc
		if !q.Sample {
			continue
		}
		ended := false
		for j := range acc {
			tok := q.Tokens[known+j]
			r.tokens = append(r.tokens, tok)
			if events, ended = s.emit(events, r, Event{ID: r.ID, Token: tok, Sample: i, Draft: j + 1}); ended {
				break
			}
		}
		if ended {
			continue
		}
		if r.Beam {
			r.held = true // the caller continues, branches or prunes it
			events = append(events, Event{ID: r.ID, Token: sampled[i], Sample: i})
			continue
		}
		// Forks first: they share the blocks of the prompt alone.
		var forked []int // indices into plan.Forks
		for j, f := range plan.Forks {
			if f.Seq != i || s.forkOf[f.ID] != r {
				continue
			}
			if err := s.pool.Fork(r.ID, f.ID); err != nil {
				return events, fmt.Errorf("sched: step %d: %w", plan.Step, err)
			}
			c := &request{Request: r.Request, arrival: s.arrived, tokens: slices.Clone(r.Prompt),
				computed: r.computed, maxLen: r.maxLen, running: true}
			c.ID, c.Forks = f.ID, nil
			c.tokens = append(c.tokens, sampled[len(plan.Seqs)+j])
			s.arrived++
			delete(s.forkOf, f.ID)
			s.byID[f.ID] = c
			s.running = append(s.running, c)
			forked = append(forked, j)
		}
		r.Forks = slices.DeleteFunc(r.Forks, func(f string) bool { return s.forkOf[f] != r })
		events = s.sampled(events, r, sampled[i], i)
		for _, j := range forked {
			k := len(plan.Seqs) + j
			events = s.sampled(events, s.byID[plan.Forks[j].ID], sampled[k], k)
		}
	}
	return events, nil
}

// sampled appends tok to r (unless it is already r's last token: a fork's
// first), finishing r on a stop token or its length limit, and returns
// events with r's event added.
func (s *Scheduler) sampled(events []Event, r *request, tok int32, at int) []Event {
	if len(r.tokens) == r.computed {
		r.tokens = append(r.tokens, tok)
	}
	events, _ = s.emit(events, r, Event{ID: r.ID, Token: tok, Sample: at})
	return events
}

// emit appends ev, r's newest token (already appended to r.tokens),
// finishing r on a stop token or its length limit; it reports whether r
// ended.
func (s *Scheduler) emit(events []Event, r *request, ev Event) ([]Event, bool) {
	tok := ev.Token
	switch {
	case slices.Contains(r.Stop, tok):
		ev.Done, ev.Reason = true, Stop
	case len(r.tokens) >= r.maxLen:
		ev.Done, ev.Reason = true, Length
	}
	if ev.Done {
		s.drop(r)
	}
	return append(events, ev), ev.Done
}
