package engine

import (
	"fmt"

	"kiln/sched"
)

// run is the loop goroutine: intake, then one step, until Close.
func (e *Engine) run() {
	defer close(e.done)
	for e.intake() {
		e.step()
		e.flushKV()
	}
	e.shutdown()
	e.flushKV()
}

// flushKV ends the step's batch of prefix-cache events (Config.KVEvents).
func (e *Engine) flushKV() {
	if e.cfg.KVEvents != nil {
		e.cfg.KVEvents.Flush()
	}
}

// intake admits new submissions and aborts cancelled requests, sleeping
// while there is nothing to run. It reports false once Close was called.
func (e *Engine) intake() bool {
	for {
		e.mu.Lock()
		subs, cancels, closed := e.inbox, e.cancels, e.closed
		e.inbox, e.cancels = e.spare[:0], nil
		e.mu.Unlock()
		for _, g := range subs {
			e.admit(g)
		}
		clear(subs)
		e.spare = subs[:0]
		for _, g := range cancels {
			e.endGroup(g, Abort, g.ctx.Err())
		}
		e.sweep()
		e.retire()
		if closed {
			return false
		}
		if len(subs) > 0 || len(cancels) > 0 {
			e.publish()
		}
		if !e.sched.Done() && !e.stalled {
			return true
		}
		<-e.wake
		e.stalled = false
	}
}

// sweep aborts the live requests whose context is done. The ctx watches
// (Submit's AfterFunc) also report them, but from their own goroutine, so
// possibly a step late: the sweep makes "cancelled before this step
// began, so not in it" exact.
func (e *Engine) sweep() {
	for _, st := range e.live {
		if st.g.cancelled() {
			e.endGroup(st.g, Abort, st.g.ctx.Err())
		}
	}
	for _, bs := range e.beams {
		if bs.g.cancelled() {
			e.endBeam(bs, Abort, bs.g.ctx.Err())
		}
	}
}

// admit hands a submission to the scheduler, the registry of live
// requests, then gives each completion its sampler in the runner. A
// failure aborts the request in the scheduler: retire then drops what
// the runner was given.
func (e *Engine) admit(g *group) {
	abort := func(err error) {
		for _, st := range g.members {
			st.finish(Abort, err)
			e.ctr.Aborted++
		}
	}
	if err := g.ctx.Err(); err != nil {
		abort(err)
		return
	}
	if g.beam != nil {
		if err := e.admitBeam(g.beam); err != nil {
			abort(err)
		}
		return
	}
	if err := e.sched.Add(g.req); err != nil {
		abort(fmt.Errorf("engine: %w", err))
		return
	}
	err := e.addMembers(g)
	if err != nil {
		e.sched.Abort(g.req.ID) // and its completions not yet forked
		abort(fmt.Errorf("engine: %w", err))
		return
	}
	for _, st := range g.members {
		e.live[st.id] = st
	}
}

// addMembers gives the runner each completion of g and the prompt rows g
// asks for.
func (e *Engine) addMembers(g *group) error {
	for _, st := range g.members {
		if err := e.runner.Add(st.id, g.req.Prompt, st.sampler); err != nil {
			return err
		}
	}
	if g.logits == 0 {
		return nil
	}
	if g.hidden {
		return e.runner.KeepPromptHidden(g.members[0].id, g.logits)
	}
	return e.runner.KeepPromptLogits(g.members[0].id, g.logits)
}

// end drops a live completion from the scheduler (freeing its blocks; the
// runner and the rest follow at the next retire) and sends its final
// event.
func (e *Engine) end(st *stream, reason FinishReason, err error) {
	e.sched.Abort(st.id)
	delete(e.live, st.id)
	if reason == Abort {
		e.ctr.Aborted++
	} else {
		e.ctr.Finished++
	}
	e.publish() // a reader who sees the final event sees the blocks freed
	st.finish(reason, err)
}

// retire drops the requests that left the scheduler since the last call
// (sched.Scheduler.Retired: finished, aborted, completions never forked)
// from the runner, the draft model's KV record and the speculation
// policy. The scheduler is the registry of live requests: aborting one
// there is the one call that ends it; the loop calls retire after each
// stage that may end requests (intake, a step, a failed step, shutdown).
func (e *Engine) retire() {
	e.retired = e.sched.Retired(e.retired[:0])
	for _, id := range e.retired {
		e.runner.Remove(id)
		if e.drafter != nil {
			e.drafter.Forget(id)
		}
		if e.policy != nil {
			e.policy.Forget(id)
		}
	}
	clear(e.retired)
}

// endGroup ends every live completion of g (a beam search's members too).
func (e *Engine) endGroup(g *group, reason FinishReason, err error) {
	if g.beam != nil {
		e.endBeam(g.beam, reason, err)
		return
	}
	for _, st := range g.members {
		if e.live[st.id] == st {
			e.end(st, reason, err)
		}
	}
}

// step runs one scheduler plan: the whole loop body.
func (e *Engine) step() {
	start := e.cfg.Now()
	plan := e.sched.Schedule()
	if len(plan.Seqs) == 0 {
		e.stalled = true // nothing fits now (not expected): sleep until something changes
		return
	}
	e.ctr.Steps++
	e.ctr.Preemptions += int64(len(plan.Preempted))
	e.ctr.ComputedTokens += int64(plan.NumTokens)
	for _, q := range plan.Seqs {
		g := e.groupOf(q.ID)
		if g == nil {
			continue
		}
		if !g.admitted {
			g.admitted = true
			g.cached = q.Start
			g.queued = start.Sub(g.submitted)
		}
		if p := len(g.req.Prompt); q.Start < p {
			g.computed += min(q.Start+len(q.Tokens), p) - q.Start
		}
	}

	out, err := e.runner.Run(&plan)
	if err != nil {
		e.fail(plan.Seqs, err)
		return
	}
	e.ctr.ForwardTime += out.Forward
	e.ctr.SampleTime += out.Sample
	if d := e.drafter; d != nil {
		skip := func(q *sched.Seq) bool {
			st := e.live[q.ID]
			return st == nil || len(q.Tokens) == 1 && q.Sample && q.Start >= len(st.g.req.Prompt)
		}
		if err := d.Run(&plan, skip); err != nil {
			e.fail(plan.Seqs, err)
			return
		}
	}
	for i, q := range plan.Seqs {
		e.ctr.countDrafts(q.Draft, out.Accepted[i])
	}
	e.observeSpec(&plan, &out)
	events, err := e.sched.UpdateDrafts(plan, out.Tokens, out.Accepted)
	if err != nil {
		e.fail(plan.Seqs, err)
		return
	}
	if d := e.drafter; d != nil {
		d.Update(&plan, out.Accepted, func(id string) bool { return e.live[id] != nil })
	}

	// One event per sample: ev.Sample indexes out (sequences, then forks).
	searches := e.searches[:0]
	for _, ev := range events {
		e.ctr.GeneratedTokens++
		st := e.live[ev.ID]
		if st == nil {
			switch bs := e.beams[ev.ID]; {
			case bs == nil:
			case bs.g.cancelled():
				e.endBeam(bs, Abort, bs.g.ctx.Err())
			case bs.sampled(ev.ID, out.Samples[ev.Sample]):
				searches = append(searches, bs) // every member has sampled: a round
			}
			continue
		}
		if st.g.cancelled() { // no token event after a cancellation
			e.endGroup(st.g, Abort, st.g.ctx.Err())
			continue
		}
		var logits []float32
		if st.g.logits > 0 && st.index == 0 && st.usage.CompletionTokens == 0 {
			logits = e.runner.TakePromptLogits(st.id)
		}
		tok := out.Samples[ev.Sample]
		if ev.Draft > 0 {
			tok = out.Drafts(ev.Sample)[ev.Draft-1] // an accepted drafted token
		}
		if !st.token(tok, ev.Done, logits) {
			e.endGroup(st.g, Abort, ErrSlowReader)
			continue
		}
		switch {
		case st.stopped():
			e.end(st, Stop, nil) // a stop string, whatever the scheduler decided
		case ev.Done:
			e.end(st, ev.Reason, nil)
		}
	}
	for _, bs := range searches {
		if bs.ended {
			continue // cancelled since
		}
		if err := e.round(bs); err != nil {
			e.endBeam(bs, Abort, err)
		}
	}
	clear(searches)
	e.searches = searches[:0]
	e.retire()
	e.propose() // drafts for the next step
	if d := e.drafter; d != nil {
		e.ctr.DraftTime += d.Time
		d.Time = 0
	}
	e.ctr.StepTime += e.cfg.Now().Sub(start)
	e.publish()
}

// groupOf is the request that sequence id belongs to, nil if none.
func (e *Engine) groupOf(id string) *group {
	if st := e.live[id]; st != nil {
		return st.g
	}
	if bs := e.beams[id]; bs != nil {
		return bs.g
	}
	return nil
}

// fail ends every request of a failed step, all its completions, with err.
func (e *Engine) fail(seqs []sched.Seq, err error) {
	for _, q := range seqs {
		if g := e.groupOf(q.ID); g != nil {
			e.endGroup(g, Abort, err)
		}
	}
	e.retire()
	e.publish()
}

// shutdown ends every request, live or still in the inbox, with ErrClosed.
func (e *Engine) shutdown() {
	e.mu.Lock()
	subs := e.inbox
	e.inbox = nil
	e.mu.Unlock()
	for _, g := range subs {
		for _, st := range g.members {
			st.finish(Abort, ErrClosed)
			e.ctr.Aborted++
		}
	}
	for _, st := range e.live {
		e.end(st, Abort, ErrClosed)
	}
	for _, bs := range e.beams {
		e.endBeam(bs, Abort, ErrClosed)
	}
	e.retire()
	e.publish()
}
