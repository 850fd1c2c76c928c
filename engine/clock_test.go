package engine

import (
	"context"
	"testing"
	"time"

	"kiln/sample"
)

// TestTimingsInjectedClock steps an engine by hand under a clock that
// only moves when the test says: a 20-token prompt submitted at 0 is
// admitted at 5 ms (its first 16-token chunk), samples its first token at
// 15 ms (the rest of the prompt) and its second and last at 25 ms, so its
// final event says queued 5 ms, first token 15 ms, total 25 ms, exactly.
func TestTimingsInjectedClock(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := base
	e, err := newEngine(tinyModel(t), Config{NumBlocks: 16, MaxBatchedTokens: 16, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	prompt := make([]int32, 20)
	for i := range prompt {
		prompt[i] = int32(i + 1)
	}
	ch, err := e.Submit(context.Background(), Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !e.intake() {
		t.Fatal("intake: closed")
	}
	for _, at := range []time.Duration{5, 15, 25} {
		now = base.Add(at * time.Millisecond)
		e.step()
	}
	var final Event
	tokens := 0
	for ev := range ch {
		if ev.Token >= 0 {
			tokens++
		}
		if ev.Done {
			final = ev
		}
	}
	want := Timings{Queued: 5 * time.Millisecond, FirstToken: 15 * time.Millisecond, Total: 25 * time.Millisecond}
	if tokens != 2 || final.Reason != Length || final.Timings != want {
		t.Fatalf("%d tokens, final %s with timings %+v; want 2, length, %+v", tokens, final.Reason, final.Timings, want)
	}
	// The step counters run on the same clock: no time passes inside a step.
	if st := e.Stats(); st.Steps != 3 || st.StepTime != 0 || st.ForwardTime != 0 {
		t.Fatalf("counters %+v", st.Counters)
	}
}
