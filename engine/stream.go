package engine

import (
	"context"
	"slices"
	"time"

	"kiln/sample"
	"kiln/sched"
	"kiln/tokenizer"
)

// group is one submitted request: its N completions share the prompt,
// the context and the channel. It is owned by the loop once taken from
// the inbox. A layer above the loop makes groups of its own (a beam
// search's rounds, beam.go): their events go to their sink, not to a
// reader.
type group struct {
	req       sched.Request // every completion's, but for its ID (and ComputeTail: the first's only)
	ctx       context.Context
	done      <-chan struct{} // ctx.Done(); nil when ctx can never be cancelled
	ch        chan Event      // capacity StreamBuffer+N: the last N slots are the final events'; nil with a sink
	sink      func(*stream, Event)
	stopWatch func() bool // unregisters the ctx watch
	members   []*stream   // by Event.Index
	open      int         // completions without their final event yet
	logits    int         // Request.PromptLogits
	hidden    bool        // Request.PromptHidden
	noSpec    bool        // Request.NoSpec
	beam      *beamSearch // Request.BeamWidth > 0: the search (its completions are not scheduled: its rounds are)
	acct      *group      // the group whose Usage and Timings count this one's prompt work; nil: itself

	now       func() time.Time // Config.Now
	submitted time.Time
	admitted  bool          // scheduled at least once
	cached    int           // prompt tokens found in the prefix cache at admission
	computed  int           // prompt positions run through the forward
	queued    time.Duration // until first scheduled
}

// account is the group that counts g's prompt work.
func (g *group) account() *group {
	if g.acct != nil {
		return g.acct
	}
	return g
}

// internal reports whether g was made by a layer above the loop (a beam
// search's round): it is not a request of its own in the counters.
func (g *group) internal() bool { return g.sink != nil }

// cancelled reports whether g's context is done, without blocking or
// locking (a non-blocking receive on its Done channel).
func (g *group) cancelled() bool {
	if g.done == nil {
		return false
	}
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// stream is one completion's live state.
type stream struct {
	g       *group
	index   int                 // Event.Index
	id      string              // the scheduler's and runner's id
	sampler *sample.Sampler     // nil for a beam search's completions (its rounds sample)
	dec     *tokenizer.Decoder  // nil without a tokenizer
	stops   *sample.StopMatcher // nil without stop strings (they need dec)

	usage   Usage
	timings Timings
	cum     float64 // a beam search completion's cumulative log-probability
	ended   bool    // its final event was sent
}

// token delivers one sampled token (with the prompt's logit rows, if
// any, the event's own). It reports false, delivering nothing, when the
// reader has let the buffer fill: the caller aborts the request. When the
// token's text completes a stop string, the event's text stops before it
// and st.stopped() turns true: the caller ends the completion.
func (st *stream) token(tok sample.Token, last bool, promptLogits []float32) bool {
	g := st.g
	if g.sink == nil && len(g.ch) >= cap(g.ch)-g.open {
		return false
	}
	if st.usage.CompletionTokens == 0 {
		st.timings.FirstToken = g.now().Sub(g.submitted)
	}
	st.usage.CompletionTokens++
	ev := Event{Token: tok.ID, Logprob: tok.Logprob, Index: st.index, PromptLogits: promptLogits}
	if len(tok.Top) > 0 {
		ev.Top = slices.Clone(tok.Top)
	}
	if st.dec != nil && !(last && slices.Contains(g.req.Stop, tok.ID)) {
		ev.Text = st.dec.Add(tok.ID)
		if st.stops != nil {
			ev.Text, _ = st.stops.Push(ev.Text)
		}
	}
	g.send(st, ev)
	return true
}

// finish sends the completion's final event (a slot is held back for it)
// and, after the group's last one, closes the channel.
func (st *stream) finish(reason FinishReason, err error) {
	g := st.g
	st.usage.CachedPromptTokens, st.usage.ComputedPromptTokens = g.cached, g.computed
	ev := Event{Token: -1, Index: st.index, Done: true, Reason: reason, Err: err, Usage: st.usage, CumLogprob: st.cum}
	if st.dec != nil && !st.stopped() {
		ev.Text = st.dec.Flush()
		if st.stops != nil {
			// The decoder's last bytes may still complete a stop string.
			text, stopped := st.stops.Push(ev.Text)
			if stopped && reason == Length {
				ev.Reason = Stop
			}
			ev.Text = text + st.stops.Flush()
		}
	}
	if st.stops != nil {
		ev.StopString = st.stops.Matched()
	}
	st.timings.Queued = g.queued
	st.timings.Total = g.now().Sub(g.submitted)
	ev.Timings = st.timings
	st.ended = true
	g.open--
	if g.open == 0 && g.stopWatch != nil {
		g.stopWatch()
	}
	g.send(st, ev)
	if g.open == 0 && g.ch != nil {
		close(g.ch)
	}
}

// send hands ev to g's sink, or to its channel: that never blocks, since
// the caller checked for a free slot (a final event's is held back) and
// only the loop sends.
func (g *group) send(st *stream, ev Event) {
	if g.sink != nil {
		g.sink(st, ev)
		return
	}
	g.ch <- ev
}

// stopped reports whether a stop string has ended the text.
func (st *stream) stopped() bool { return st.stops != nil && st.stops.Stopped() }
