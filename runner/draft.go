package runner

import (
	"fmt"
	"iter"
	"time"

	"kiln/model"
	"kiln/sched"
)

// Drafter drives a draft model for speculative decoding (the engine's
// Speculation{Method: "draft"}): a small model with the target's
// vocabulary that drafts up to k tokens greedily for the requests that
// decode next, all of them batched in one forward per drafted position.
// Drafting is a stage after a step's forward and Update: Propose drafts
// for the next step (the engine stores the drafts on the requests,
// sched.Scheduler.SetDrafts); the next step's Run and Update keep the
// draft's KV in step with the target's.
//
// KV. The draft has its own KV store with the target's block size and
// block ids, plus scratch blocks (ids >= the target's NumBlocks): block id
// b holds the target's KV of some positions in the target's store and the
// draft's KV of the same positions in the draft's, so the block manager,
// prefix cache, copy-on-write and rollback serve both unchanged (block
// copies are applied to both stores).
//
// Keeping the draft's KV in step. kv[id] is how many leading positions of
// request id hold the draft's KV of its committed tokens:
//   - every step's prompt and recompute chunks (not 1-token decodes, not
//     drafted chunks) also run through the draft (Run: same tokens,
//     positions and tables, no logits), so prompt blocks, those later
//     served from the prefix cache included, carry draft KV; kv = the
//     chunk's end;
//   - drafting (Propose, after a step) feeds pass 1 with tokens[kv:] (the
//     catch-up of the decodes run without drafting, then the last known
//     token, whose KV the next step computes), then each pass the previous
//     pass's argmax. When the draft is made, the blocks the next step
//     writes do not exist yet (its decode allocates them, copy-on-write of
//     a shared partial block included), so positions from the last known
//     token's block on are written to scratch blocks, that block's
//     committed positions copied there first; the committed positions
//     before it go to the real blocks (the same KV every sharer has
//     there; kv then covers them). The next step's Run, once the scheduler has allocated it
//     and its block copies are applied, copies the scratch blocks into
//     the request's real ones; after verification (Update) kv = the
//     committed positions whose draft KV holds the token accepted there;
//   - a preempted request starts again from 0, a fork from its parent's.
//
// Stale or missing draft KV (a prefix-cache block filled by decodes that
// were never drafted, say) can only lower acceptance: the target verifies
// every drafted token, so the output never depends on the draft.
type Drafter struct {
	b         Backend          // the draft model over its store (NumBlocks + ScratchBlocks blocks)
	k         int              // drafted tokens per request and step at most
	bs        int              // block size, the target's
	numBlocks int              // the target's: scratch ids start here
	perAsk    int              // scratch blocks one ask may need
	maxAsks   int              // asks drafted in one proposal (the scratch blocks' bound)
	ctx       int              // the draft's context: positions it can hold
	now       func() time.Time // the clock of Time and PassTime

	kv      map[string]int // request -> positions with the draft's KV of committed tokens
	pending []drafted      // the last proposal's drafts, for the next step

	// Scratch reused every step.
	batch  model.Batch
	tables [][]int32 // [maxAsks] real table then scratch ids
	tokens [][]int32 // [maxAsks] drafted tokens
	act    []int     // indices into pending of the asks in a pass

	// Time is the wall time of the draft's forwards (drafting and prompt
	// catch-up) since the caller last reset it. Passes and PassTime are
	// the last proposal's forwards and their time (the adaptive policy's
	// cost measure).
	Time     time.Duration
	Passes   int
	PassTime time.Duration
}

// drafted is one request's draft of a proposal.
type drafted struct {
	id      string
	ask     int  // index in the proposal's asks
	from, n int  // pass 1 fed positions [from, n); n = len(tokens)
	m       int  // tokens drafted: pass j wrote position n+j-2 (j >= 2) with the draft token j-1
	base    int  // the first block index in scratch: positions from base*bs on were written there
	used    int  // scratch blocks written
	cover   int  // positions the real table covered after the next step's allocation: draft KV past it is lost
	live    bool // the next step decodes it: its scratch blocks were copied into its table (Run)
	scratch int  // first scratch id of its ask slot
}

// DrafterConfig sizes a Drafter.
type DrafterConfig struct {
	Tokens    int              // k: drafted tokens per request at most, >= 1
	BlockSize int              // the target's
	NumBlocks int              // the target's: the first scratch block id
	MaxAsks   int              // requests drafted in one proposal at most, >= 1
	Now       func() time.Time // nil: time.Now
}

// ScratchBlocks is how many scratch blocks a drafter of c needs besides
// the target's NumBlocks: for each ask, from the block of its last known
// token (written before the next step allocates it) up to the block of
// its last drafted position, k-1 positions further.
func (c DrafterConfig) ScratchBlocks() int {
	return c.MaxAsks * (1 + (c.Tokens-1+c.BlockSize-1)/c.BlockSize)
}

// NewDrafter returns a drafter of b, a draft model over a store of
// c.NumBlocks+c.ScratchBlocks() blocks of c.BlockSize slots, for a target
// of vocab logits.
func NewDrafter(b Backend, c DrafterConfig, vocab int) (*Drafter, error) {
	if c.Tokens < 1 || c.BlockSize < 1 || c.NumBlocks < 1 || c.MaxAsks < 1 {
		return nil, fmt.Errorf("runner: drafter %+v: every size must be positive", c)
	}
	if v := b.Vocab(); v != vocab {
		return nil, fmt.Errorf("runner: the draft model's vocabulary has %d tokens, the target's %d: they must be the same", v, vocab)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	d := &Drafter{b: b, k: c.Tokens, bs: c.BlockSize, numBlocks: c.NumBlocks, perAsk: c.ScratchBlocks() / c.MaxAsks,
		maxAsks: c.MaxAsks, ctx: b.Context(), now: c.Now, kv: map[string]int{}}
	d.tables = make([][]int32, d.maxAsks)
	d.tokens = make([][]int32, d.maxAsks)
	return d, nil
}

// Propose drafts for the asks that wants (at most MaxAsks of them, each
// up to its Max and k tokens), setting their Draft (the drafter's
// scratch, valid until the next Propose): see the type's comment. It
// runs after a step's Update; the drafts are for the next step.
func (d *Drafter) Propose(asks []sched.DraftAsk, wants func(a *sched.DraftAsk) bool) error {
	d.pending = d.pending[:0]
	d.Passes, d.PassTime = 0, 0
	for i := range asks {
		a := &asks[i]
		if len(d.pending) == d.maxAsks || !wants(a) {
			continue
		}
		n := len(a.Tokens)
		m := min(a.Max, d.k, d.ctx-n+1) // the last pass writes position n+m-2 < ctx
		if m < 1 || len(a.Table)*d.bs < n-1 {
			continue // (a table short of the committed tokens is not a decode's)
		}
		j := len(d.pending)
		p := drafted{id: a.ID, ask: i, from: min(d.kv[a.ID], n-1), n: n, m: m, base: (n - 1) / d.bs, scratch: d.numBlocks + j*d.perAsk}
		t := append(d.tables[j][:0], a.Table[:p.base]...)
		for len(t)*d.bs < n+m-1 {
			t = append(t, int32(p.scratch+len(t)-p.base))
		}
		p.used = len(t) - p.base
		if p.base < len(a.Table) {
			// The last known token's block holds committed positions:
			// carry them into scratch before writing past them.
			if err := d.b.CopyBlock(int(a.Table[p.base]), p.scratch); err != nil {
				return fmt.Errorf("runner: draft model: %w", err)
			}
		}
		d.tables[j] = t
		d.tokens[j] = d.tokens[j][:0]
		d.pending = append(d.pending, p)
	}
	if len(d.pending) == 0 {
		return nil
	}
	t0 := d.now()
	defer func() {
		d.PassTime = d.now().Sub(t0)
		d.Time += d.PassTime
	}()
	vocab := d.b.Vocab()
	for pass := 1; ; pass++ {
		b := d.reset()
		d.act = d.act[:0]
		for j, p := range d.pending {
			if p.m < pass {
				continue
			}
			d.act = append(d.act, j)
			if pass == 1 {
				toks := asks[p.ask].Tokens
				for pos := p.from; pos < p.n; pos++ {
					b.Tokens = append(b.Tokens, toks[pos])
					b.Positions = append(b.Positions, int32(pos))
				}
			} else {
				b.Tokens = append(b.Tokens, d.tokens[j][pass-2])
				b.Positions = append(b.Positions, int32(p.n+pass-2))
			}
			end := int32(len(b.Tokens))
			b.SeqStarts = append(b.SeqStarts, end)
			b.BlockTables = append(b.BlockTables, d.tables[j])
			b.ContextLens = append(b.ContextLens, b.Positions[end-1]+1)
			b.LogitRows = append(b.LogitRows, end-1)
		}
		if len(d.act) == 0 {
			break
		}
		logits, err := d.b.Forward(b)
		if err != nil {
			d.pending = d.pending[:0]
			return fmt.Errorf("runner: draft model: %w", err)
		}
		d.Passes++
		for r, j := range d.act {
			d.tokens[j] = append(d.tokens[j], argmax(logits[r*vocab:(r+1)*vocab]))
		}
	}
	for j, p := range d.pending {
		// Pass 1 wrote the committed positions [from, base*bs) into real blocks.
		if at := p.base * d.bs; at > p.from {
			d.kv[p.id] = at
		}
		asks[p.ask].Draft = d.tokens[j]
	}
	return nil
}

// argmax is the greedy token of a logit row (the lowest id on ties).
func argmax(row []float32) int32 {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return int32(best)
}

// reset empties d's batch.
func (d *Drafter) reset() *model.Batch {
	b := &d.batch
	b.Tokens, b.Positions, b.SeqStarts = b.Tokens[:0], b.Positions[:0], append(b.SeqStarts[:0], 0)
	b.BlockTables, b.ContextLens, b.LogitRows = b.BlockTables[:0], b.ContextLens[:0], b.LogitRows[:0]
	return b
}

// Run is the draft model's part of running plan (after the target's
// forward: the plan's tables are the same). It applies plan's block
// copies to the draft's store, copies the last proposal's scratch blocks
// into the real blocks of the requests plan decodes (their tables as
// plan allocated them; a proposal plan does not decode is dropped), then
// runs plan's prompt and recompute chunks through the draft. skip says
// which undrafted sequences are decodes (a request's output token) or
// otherwise not to run (beam members: they never speculate); every other
// chunk runs, even of one token, so that a request's chunks are
// contiguous in the draft's KV as in the target's.
func (d *Drafter) Run(plan *sched.Plan, skip func(q *sched.Seq) bool) error {
	for _, c := range plan.Copies {
		if err := d.b.CopyBlock(int(c.Src), int(c.Dst)); err != nil {
			return fmt.Errorf("runner: draft model: %w", err)
		}
	}
	for j := range d.pending {
		p := &d.pending[j]
		q := decodeOf(plan, p.id, p.n)
		if q == nil {
			continue
		}
		p.live, p.cover = true, len(q.Table)*d.bs
		for i := range min(p.used, len(q.Table)-p.base) {
			if err := d.b.CopyBlock(p.scratch+i, int(q.Table[p.base+i])); err != nil {
				return fmt.Errorf("runner: draft model: %w", err)
			}
		}
	}
	b := d.reset()
	for i := range plan.Seqs {
		q := &plan.Seqs[i]
		if q.Draft > 0 || q.Start >= d.ctx || skip(q) {
			continue
		}
		end := min(q.Start+len(q.Tokens), d.ctx)
		b.Tokens = append(b.Tokens, q.Tokens[:end-q.Start]...)
		for pos := q.Start; pos < end; pos++ {
			b.Positions = append(b.Positions, int32(pos))
		}
		b.SeqStarts = append(b.SeqStarts, int32(len(b.Tokens)))
		b.BlockTables = append(b.BlockTables, q.Table)
		b.ContextLens = append(b.ContextLens, int32(end))
		// A first chunk (after admission or preemption) starts after the
		// cached prefix, whose blocks carry draft KV (prompt chunks ran
		// through the draft when they were computed); a later one where
		// the last ended.
		if kv, ok := d.kv[q.ID]; !ok || q.Start <= kv {
			d.kv[q.ID] = end
		}
	}
	if len(b.Tokens) == 0 {
		return nil
	}
	t0 := d.now()
	_, err := d.b.Forward(b)
	d.Time += d.now().Sub(t0)
	if err != nil {
		return fmt.Errorf("runner: draft model: %w", err)
	}
	return nil
}

// decodeOf is plan's entry that decodes request id's n-th token (position
// n-1, with or without a draft), nil if none; a request preempted in plan
// has none.
func decodeOf(plan *sched.Plan, id string, n int) *sched.Seq {
	for _, v := range plan.Preempted {
		if v == id {
			return nil
		}
	}
	for i := range plan.Seqs {
		if q := &plan.Seqs[i]; q.ID == id && q.Sample && q.Start == n-1 && len(q.Tokens)-q.Draft == 1 {
			return q
		}
	}
	return nil
}

// Update sets the draft KV of plan's drafted requests, preempted ones
// and forks once the scheduler has applied plan (accepted: Output.Accepted).
// live says which requests still run.
func (d *Drafter) Update(plan *sched.Plan, accepted []int32, live func(id string) bool) {
	for _, id := range plan.Preempted {
		delete(d.kv, id)
	}
	for _, p := range d.pending {
		if !p.live || !live(p.id) {
			continue
		}
		acc := 0
		for i, q := range plan.Seqs {
			if q.ID == p.id && q.Draft > 0 {
				acc = int(accepted[i])
				break
			}
		}
		// Pass 1 wrote [from, n); pass j >= 2 wrote draft token j-1 at
		// n+j-2: positions n .. n+min(acc, m-1)-1 hold accepted tokens.
		d.kv[p.id] = min(p.n+min(acc, p.m-1), p.cover) // cover >= n
	}
	d.pending = d.pending[:0]
	for _, f := range plan.Forks {
		if live(f.ID) {
			d.kv[f.ID] = d.kv[plan.Seqs[f.Seq].ID]
		}
	}
}

// Forget drops a request that ended.
func (d *Drafter) Forget(id string) { delete(d.kv, id) }

// Records are the draft KV records: each request and how many leading
// positions of it hold the draft's KV of its committed tokens.
func (d *Drafter) Records() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for id, n := range d.kv {
			if !yield(id, n) {
				return
			}
		}
	}
}
