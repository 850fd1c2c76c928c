package engine

import (
	"fmt"
	"time"

	"kiln/kvcache"
	"kiln/model"
	"kiln/runner"
	"kiln/sched"
)

// The draft-model proposer (Speculation{Method: "draft"}): a small model
// with the target's vocabulary drafts k tokens greedily, all speculating
// requests batched in one forward per drafted position.
//
// KV. The draft has its own KV store with the target's block size and
// block ids, plus a few scratch blocks (ids >= Config.NumBlocks): block id
// b holds the target's KV of some positions in the target's store and the
// draft's KV of the same positions in the draft's, so the block manager,
// prefix cache, copy-on-write and rollback serve both unchanged (block
// copies are applied to both stores). Scratch blocks take draft positions
// past the end of a request's real table (the blocks a draft's
// verification will allocate do not exist yet when the draft is made).
//
// Keeping the draft's KV in step. kv[id] is how many leading positions of
// live request id hold the draft's KV of its committed tokens:
//   - every step's prompt and recompute chunks (not 1-token decodes, not
//     drafted chunks) also run through the draft (same tokens, positions
//     and tables, no logits), so prompt blocks, those later served from
//     the prefix cache included, carry draft KV; kv = the chunk's end;
//   - drafting (propose) feeds pass 1 with tokens[kv:] (the catch-up of
//     the decodes run without drafting, then the last known token), then
//     each pass the previous pass's argmax; after verification kv = the
//     committed positions whose draft KV was written into real blocks
//     with the token that was accepted there;
//   - a preempted request starts again from 0, a fork from its parent's.
//
// Drafting writes only positions >= kv of a decoding request, which lie
// in its private blocks (its decode's allocation made the partial block
// private), and committed positions below that in blocks it may share,
// with the KV every sharer has there (the same tokens at the same
// positions). Stale or missing draft KV (a prefix-cache block filled by
// decodes that were never drafted, say) can only lower acceptance: the
// target verifies every drafted token, so the output never depends on the
// draft.
type drafter struct {
	b         runner.Backend   // the draft model over its store (numBlocks + scratch blocks)
	k         int              // drafted tokens per request and step
	bs        int              // block size, the target's
	numBlocks int              // the target's: scratch ids start here
	perAsk    int              // scratch blocks one ask may need
	maxAsks   int              // asks drafted in one step (the scratch blocks' bound)
	ctx       int              // the draft's context: positions it can hold
	now       func() time.Time // Config.Now: the clock of DraftTime

	kv      map[string]int        // live request -> positions with the draft's KV of committed tokens
	copied  map[kvcache.Copy]bool // this step's block copies already applied to the draft's store
	pending []drafted             // this step's drafts, for update
	err     error                 // a failed draft forward, reported by the step

	// Scratch reused every step.
	batch  model.Batch
	tables [][]int32 // [maxAsks] real table then scratch ids
	tokens [][]int32 // [maxAsks] drafted tokens
	act    []int     // indices into pending of the asks in a pass
	time   time.Duration
	// The last propose's passes and their time (the adaptive policy's
	// cost measure).
	passes   int
	passTime time.Duration
}

// drafted is one request's draft of this step.
type drafted struct {
	id      string
	ask     int // index in the proposer's asks
	from, n int // pass 1 fed positions [from, n); n = len(tokens)
	m       int // tokens drafted: pass j wrote position n+j-2 (j >= 2) with the draft token j-1
	cover   int // positions the real table covered: draft KV past it went to scratch blocks
}

// scratchBlocks is how many scratch blocks each ask may need for k
// drafted tokens: the last pass writes position n+k-2, at most k-1
// positions past a real table that covers position n-1, starting on a
// block boundary.
func scratchBlocks(k, blockSize int) int { return (k - 1 + blockSize - 1) / blockSize }

// newDrafter sets up the draft model of cfg (filled) for a target of
// vocab logits: over Spec.DraftBackend, or over a new store for
// Spec.Draft.
func newDrafter(cfg *Config, vocab int) (*drafter, error) {
	s := &cfg.Spec
	d := &drafter{k: s.Tokens, bs: cfg.BlockSize, numBlocks: cfg.NumBlocks, perAsk: scratchBlocks(s.Tokens, cfg.BlockSize),
		maxAsks: min(s.MaxSeqs, cfg.MaxSeqs), now: cfg.Now, kv: map[string]int{}, copied: map[kvcache.Copy]bool{}}
	switch {
	case s.DraftBackend != nil:
		d.b = s.DraftBackend
	case s.Draft != nil:
		kv, err := s.Draft.NewKVStore(model.KVStoreOptions{NumBlocks: cfg.NumBlocks + d.maxAsks*d.perAsk, BlockSize: cfg.BlockSize, Type: cfg.kvType()})
		if err != nil {
			return nil, fmt.Errorf("engine: draft model: %w", err)
		}
		d.b = runner.ModelBackend(s.Draft, kv)
	default:
		return nil, fmt.Errorf("engine: speculative method draft needs Speculation.Draft (or DraftBackend)")
	}
	if v := d.b.Vocab(); v != vocab {
		return nil, fmt.Errorf("engine: the draft model's vocabulary has %d tokens, the target's %d: they must be the same", v, vocab)
	}
	d.ctx = d.b.Context()
	d.tables = make([][]int32, d.maxAsks)
	d.tokens = make([][]int32, d.maxAsks)
	return d, nil
}

// propose drafts for the asks that wants (at most maxAsks of them): see
// the type's comment. A failed forward leaves d.err for the step.
func (d *drafter) propose(asks []sched.DraftAsk, wants func(id string) bool) {
	d.pending = d.pending[:0]
	d.passes, d.passTime = 0, 0
	for i := range asks {
		a := &asks[i]
		if len(d.pending) == d.maxAsks || !wants(a.ID) {
			continue
		}
		n := len(a.Tokens)
		m := min(a.Max, d.k, d.ctx-n+1) // the last pass writes position n+m-2 < ctx
		if m < 1 {
			continue
		}
		for _, c := range a.Copies { // before writing into the copies' destinations
			if err := d.copy(c); err != nil {
				d.err = err
				return
			}
		}
		j := len(d.pending)
		t := append(d.tables[j][:0], a.Table...)
		for len(t)*d.bs < n+m-1 {
			t = append(t, int32(d.numBlocks+j*d.perAsk+len(t)-len(a.Table)))
		}
		d.tables[j] = t
		d.tokens[j] = d.tokens[j][:0]
		d.pending = append(d.pending, drafted{id: a.ID, ask: i, from: min(d.kv[a.ID], n-1), n: n, m: m, cover: len(a.Table) * d.bs})
	}
	if len(d.pending) == 0 {
		return
	}
	t0 := d.now()
	defer func() {
		d.passTime = d.now().Sub(t0)
		d.time += d.passTime
	}()
	for pass := 1; ; pass++ {
		b := d.reset()
		d.act = d.act[:0]
		for j, p := range d.pending {
			if p.m < pass {
				continue
			}
			d.act = append(d.act, j)
			a := &asks[p.ask]
			if pass == 1 {
				for pos := p.from; pos < p.n; pos++ {
					b.Tokens = append(b.Tokens, a.Tokens[pos])
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
			d.err = fmt.Errorf("engine: draft model: %w", err)
			d.pending = d.pending[:0]
			return
		}
		d.passes++
		vocab := d.b.Vocab()
		for r, j := range d.act {
			d.tokens[j] = append(d.tokens[j], argmax(logits[r*vocab:(r+1)*vocab]))
		}
	}
	for j, p := range d.pending {
		asks[p.ask].Draft = d.tokens[j]
	}
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
func (d *drafter) reset() *model.Batch {
	b := &d.batch
	b.Tokens, b.Positions, b.SeqStarts = b.Tokens[:0], b.Positions[:0], append(b.SeqStarts[:0], 0)
	b.BlockTables, b.ContextLens, b.LogitRows = b.BlockTables[:0], b.ContextLens[:0], b.LogitRows[:0]
	return b
}

// copy applies a block copy to the draft's store, once per step.
func (d *drafter) copy(c kvcache.Copy) error {
	if d.copied[c] {
		return nil
	}
	d.copied[c] = true
	if err := d.b.CopyBlock(int(c.Src), int(c.Dst)); err != nil {
		return fmt.Errorf("engine: draft model: %w", err)
	}
	return nil
}

// prefill applies plan's block copies that propose did not, then runs
// plan's prompt and recompute chunks through the draft (after the
// target's forward: the plan's tables are the same). decode says which
// undrafted sequences are decodes (a request's output token) or
// otherwise not to run (beam members: they never speculate); every other
// chunk runs, even of one token, so that a request's chunks are
// contiguous in the draft's KV as in the target's.
func (d *drafter) prefill(plan *sched.Plan, decode func(q *sched.Seq) bool) error {
	for _, c := range plan.Copies {
		if err := d.copy(c); err != nil {
			return err
		}
	}
	clear(d.copied)
	b := d.reset()
	for i := range plan.Seqs {
		q := &plan.Seqs[i]
		if q.Draft > 0 || q.Start >= d.ctx || decode(q) {
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
	d.time += d.now().Sub(t0)
	if err != nil {
		return fmt.Errorf("engine: draft model: %w", err)
	}
	return nil
}

// update sets the draft KV of this step's drafting requests, preempted
// ones and forks once the scheduler has applied plan (accepted: the
// runner's Output.Accepted). live says which requests still run.
func (d *drafter) update(plan *sched.Plan, accepted []int32, live func(id string) bool) {
	for _, id := range plan.Preempted {
		delete(d.kv, id)
	}
	for _, p := range d.pending {
		acc := 0
		for i, q := range plan.Seqs {
			if q.ID == p.id && q.Draft > 0 {
				acc = int(accepted[i])
				break
			}
		}
		// Pass 1 wrote [from, n); pass j >= 2 wrote draft token j-1 at
		// n+j-2: positions n .. n+min(acc, m-1)-1 hold accepted tokens.
		if live(p.id) {
			d.kv[p.id] = min(p.n+min(acc, p.m-1), p.cover) // cover >= n
		}
	}
	d.pending = d.pending[:0]
	for _, f := range plan.Forks {
		if live(f.ID) {
			d.kv[f.ID] = d.kv[plan.Seqs[f.Seq].ID]
		}
	}
}

// forget drops a request that ended.
func (d *drafter) forget(id string) { delete(d.kv, id) }
