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
	}
	e.shutdown()
}

// intake admits new submissions and aborts cancelled requests, sleeping
// while there is nothing to run. It reports false once Close was called.
func (e *Engine) intake() bool {
	for {
		e.mu.Lock()
		subs, cancels, closed := e.inbox, e.cancels, e.closed
		e.inbox, e.cancels = e.spare[:0], nil
		e.mu.Unlock()
		for _, st := range subs {
			e.admit(st)
		}
		clear(subs)
		e.spare = subs[:0]
		for _, st := range cancels {
			if e.live[st.req.ID] == st {
				e.end(st, Abort, st.ctx.Err())
			}
		}
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

// admit hands a submission to the scheduler and the runner.
func (e *Engine) admit(st *stream) {
	if err := st.ctx.Err(); err != nil {
		st.finish(Abort, err)
		e.ctr.Aborted++
		return
	}
	if err := e.sched.Add(st.req); err != nil {
		st.finish(Abort, fmt.Errorf("engine: %w", err))
		e.ctr.Aborted++
		return
	}
	if err := e.runner.Add(st.req.ID, st.req.Prompt, st.sampler); err != nil {
		e.sched.Abort(st.req.ID)
		st.finish(Abort, fmt.Errorf("engine: %w", err))
		e.ctr.Aborted++
		return
	}
	e.live[st.req.ID] = st
}

// end drops a live request from the scheduler (freeing its blocks) and the
// runner, and sends its final event.
func (e *Engine) end(st *stream, reason FinishReason, err error) {
	e.sched.Abort(st.req.ID)
	e.runner.Remove(st.req.ID)
	delete(e.live, st.req.ID)
	if reason == Abort {
		e.ctr.Aborted++
	} else {
		e.ctr.Finished++
	}
	e.publish() // a reader who sees the final event sees the blocks freed
	st.finish(reason, err)
}

// step runs one scheduler plan: the whole loop body.
func (e *Engine) step() {
	plan := e.sched.Schedule()
	if len(plan.Seqs) == 0 {
		e.stalled = true // nothing fits now (not expected): sleep until something changes
		return
	}
	e.ctr.Steps++
	e.ctr.Preemptions += int64(len(plan.Preempted))
	e.ctr.ComputedTokens += int64(plan.NumTokens)
	for _, q := range plan.Seqs {
		if st := e.live[q.ID]; st != nil && !st.admitted {
			st.admitted = true
			st.usage.CachedPromptTokens = q.Start
			st.timings.Queued = sinceSubmit(st)
		}
	}

	out, err := e.runner.Run(&plan)
	if err != nil {
		e.fail(plan.Seqs, err)
		return
	}
	events, err := e.sched.Update(plan, out.Tokens)
	if err != nil {
		e.fail(plan.Seqs, err)
		return
	}

	// events follow plan.Seqs' order, one per sampled sequence.
	k := 0
	for i, q := range plan.Seqs {
		if out.Tokens[i] < 0 || k >= len(events) || events[k].ID != q.ID {
			continue
		}
		ev := events[k]
		k++
		e.ctr.GeneratedTokens++
		st := e.live[q.ID]
		if st == nil {
			continue
		}
		if !st.token(out.Samples[i], ev.Done) {
			e.end(st, Abort, ErrSlowReader)
			continue
		}
		switch {
		case st.stopped():
			e.end(st, Stop, nil) // a stop string, whatever the scheduler decided
		case ev.Done:
			reason := Length
			if ev.Reason == sched.Stop {
				reason = Stop
			}
			e.end(st, reason, nil)
		}
	}
	e.publish()
}

// fail ends every request of a failed step with err.
func (e *Engine) fail(seqs []sched.Seq, err error) {
	for _, q := range seqs {
		if st := e.live[q.ID]; st != nil {
			e.end(st, Abort, err)
		}
	}
	e.publish()
}

// shutdown ends every request, live or still in the inbox, with ErrClosed.
func (e *Engine) shutdown() {
	e.mu.Lock()
	subs := e.inbox
	e.inbox = nil
	e.mu.Unlock()
	for _, st := range subs {
		st.finish(Abort, ErrClosed)
		e.ctr.Aborted++
	}
	for _, st := range e.live {
		e.end(st, Abort, ErrClosed)
	}
	e.publish()
}
