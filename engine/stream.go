package engine

import (
	"context"
	"slices"
	"time"

	"kiln/sample"
	"kiln/sched"
	"kiln/tokenizer"
)

// stream is one request's live state, owned by the loop once taken from
// the inbox.
type stream struct {
	req       sched.Request
	ctx       context.Context
	sampler   *sample.Sampler
	dec       *tokenizer.Decoder  // nil without a tokenizer
	stops     *sample.StopMatcher // nil without stop strings (they need dec)
	ch        chan Event          // capacity StreamBuffer+1: the last slot is the final event's
	stopWatch func() bool         // unregisters the ctx watch

	submitted time.Time
	admitted  bool // scheduled at least once
	usage     Usage
	timings   Timings
}

// token delivers one sampled token. It reports false, delivering nothing,
// when the reader has let the buffer fill: the caller aborts the request.
// When the token's text completes a stop string, the event's text stops
// before it and st.stopped() turns true: the caller ends the request.
func (st *stream) token(tok sample.Token, last bool) bool {
	if len(st.ch) >= cap(st.ch)-1 {
		return false
	}
	if st.usage.CompletionTokens == 0 {
		st.timings.FirstToken = time.Since(st.submitted)
	}
	st.usage.CompletionTokens++
	ev := Event{Token: tok.ID, Logprob: tok.Logprob}
	if len(tok.Top) > 0 {
		ev.Top = slices.Clone(tok.Top)
	}
	if st.dec != nil && !(last && slices.Contains(st.req.Stop, tok.ID)) {
		ev.Text = st.dec.Add(tok.ID)
		if st.stops != nil {
			ev.Text, _ = st.stops.Push(ev.Text)
		}
	}
	st.ch <- ev // never blocks: a slot was free, and only the loop sends
	return true
}

// finish sends the final event (the slot held back for it is free) and
// closes the channel.
func (st *stream) finish(reason FinishReason, err error) {
	ev := Event{Token: -1, Done: true, Reason: reason, Err: err, Usage: st.usage}
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
	st.timings.Total = time.Since(st.submitted)
	ev.Timings = st.timings
	st.ch <- ev
	close(st.ch)
	if st.stopWatch != nil {
		st.stopWatch()
	}
}

// stopped reports whether a stop string has ended the text.
func (st *stream) stopped() bool { return st.stops != nil && st.stops.Stopped() }

func sinceSubmit(st *stream) time.Duration { return time.Since(st.submitted) }
