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

// intake admits new submissions and the sequences the layers above the
// loop queued (e.pending: n > 1's further completions, a beam search's
// round), and aborts cancelled requests, sleeping while there is nothing
// to run. It reports false once Close was called.
func (e *Engine) intake() bool {
	for {
		e.mu.Lock()
		subs, cancels, closed := e.inbox, e.cancels, e.closed
		e.inbox, e.cancels = e.spare[:0], nil
		e.mu.Unlock()
		pending := e.pending
		e.pending = e.later[:0]
		for _, st := range pending {
			e.admit(st)
		}
		clear(pending)
		e.later = pending[:0]
		for _, g := range subs {
			e.submitted(g)
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
		if len(subs) > 0 || len(cancels) > 0 || len(pending) > 0 {
			e.publish()
		}
		if !e.sched.Done() && !e.stalled {
			return true
		}
		if len(e.pending) > 0 {
			continue // nothing queues during intake today; never sleep on a queue
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
}

// admit hands one sequence to the scheduler, the registry of live
// requests, then gives it its sampler (and the prompt rows its request
// asks for) in the runner. A failure ends its whole request: it is
// aborted in the scheduler, and retire drops what the runner was given.
func (e *Engine) admit(st *stream) {
	g := st.g
	if st.ended {
		return // its request ended while it was queued
	}
	if err := g.ctx.Err(); err != nil {
		e.endGroup(g, Abort, err)
		return
	}
	req := g.req
	req.ID = st.id
	if st.index > 0 {
		req.ComputeTail = 0 // the prompt rows are the first completion's
	}
	if err := e.sched.Add(req); err != nil {
		e.endGroup(g, Abort, fmt.Errorf("engine: %w", err))
		return
	}
	if err := e.addRunner(st, req.Prompt); err != nil {
		e.sched.Abort(st.id)
		e.endGroup(g, Abort, fmt.Errorf("engine: %w", err))
		return
	}
	e.live[st.id] = st
}

// addRunner gives the runner sequence st and the prompt rows its request
// asks for.
func (e *Engine) addRunner(st *stream, prompt []int32) error {
	if err := e.runner.Add(st.id, prompt, st.sampler); err != nil {
		return err
	}
	g := st.g
	if g.logits == 0 || st.index > 0 {
		return nil
	}
	if g.hidden {
		return e.runner.KeepPromptHidden(st.id, g.logits)
	}
	return e.runner.KeepPromptLogits(st.id, g.logits)
}

// end drops a live completion from the scheduler (freeing its blocks; the
// runner and the rest follow at the next retire) and sends its final
// event.
func (e *Engine) end(st *stream, reason FinishReason, err error) {
	e.sched.Abort(st.id)
	delete(e.live, st.id)
	e.count(st.g, reason)
	e.publish() // a reader who sees the final event sees the blocks freed
	st.finish(reason, err)
}

// count counts a completion of g that ended for reason.
func (e *Engine) count(g *group, reason FinishReason) {
	switch {
	case g.internal(): // a layer above counts its own request
	case reason == Abort:
		e.ctr.Aborted++
	default:
		e.ctr.Finished++
	}
}

// retire drops the requests that left the scheduler since the last call
// (sched.Scheduler.Retired: finished or aborted)
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

// endGroup ends every completion of g not ended yet: those the
// scheduler holds, and those still queued for it (a beam search's
// completions and its round's requests too).
func (e *Engine) endGroup(g *group, reason FinishReason, err error) {
	if g.beam != nil {
		e.endBeam(g.beam, reason, err)
		return
	}
	for _, st := range g.members {
		switch {
		case st.ended:
		case e.live[st.id] == st:
			e.end(st, reason, err)
		default: // queued (e.pending) or held back (n > 1): not admitted yet
			e.count(g, reason)
			st.finish(reason, err)
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
	e.ctr.PeakRunning = max(e.ctr.PeakRunning, int64(e.sched.NumRunning()))
	e.ctr.ComputedTokens += int64(plan.NumTokens)
	for _, q := range plan.Seqs {
		st := e.live[q.ID]
		if st == nil {
			continue
		}
		g := st.g.account()
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
			return st == nil || st.g.internal() || len(q.Tokens) == 1 && q.Sample && q.Start >= len(st.g.req.Prompt)
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

	// Emit: one event per sampled or accepted token; ev.Sample indexes out.
	for _, ev := range events {
		e.ctr.GeneratedTokens++
		st := e.live[ev.ID]
		if st == nil {
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
		if st.index == 0 && st.usage.CompletionTokens == 1 {
			e.release(st.g) // n > 1: the prompt is cached now
		}
		switch {
		case st.stopped():
			e.end(st, Stop, nil) // a stop string, whatever the scheduler decided
		case ev.Done:
			e.end(st, ev.Reason, nil)
		}
	}
	e.retire()
	e.propose() // drafts for the next step
	if d := e.drafter; d != nil {
		e.ctr.DraftTime += d.Time
		d.Time = 0
	}
	e.ctr.StepTime += e.cfg.Now().Sub(start)
	e.publish()
}

// fail ends every request of a failed step, all its completions, with err.
func (e *Engine) fail(seqs []sched.Seq, err error) {
	for _, q := range seqs {
		if st := e.live[q.ID]; st != nil {
			e.endGroup(st.g, Abort, err)
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
		e.endGroup(st.g, Abort, ErrClosed)
	}
	for len(e.pending) > 0 { // ending a beam search's round queues nothing; to be safe
		pending := e.pending
		e.pending = nil
		for _, st := range pending {
			e.endGroup(st.g, Abort, ErrClosed)
		}
	}
	e.retire()
	e.publish()
}
