package engine

import (
	"context"
	"testing"

	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/sample"
)

// TestDecodeStepAllocs measures the loop's steady-state decode step (16
// requests, one token each, stepped by hand without the loop goroutine)
// and bounds it. The scheduler reuses its plan and event buffers and hands
// out views of the requests' tokens and the pool's block tables, the
// runner, forward and samplers allocate nothing (runner.TestDecodeAllocs),
// and Event values go by value: what is left is amortized growth (a
// request's token list, a block appended to a table, a full block's hash
// committed), about 4 allocations a step where it was 75.
func TestDecodeStepAllocs(t *testing.T) {
	e, chs := decoding(t, 16)
	got := testing.AllocsPerRun(50, func() {
		e.step()
		drain(chs)
	})
	if e.Stats().Running != 16 {
		t.Fatalf("stats: %+v", e.Stats())
	}
	t.Logf("steady-state decode step, 16 requests: %v allocations", got)
	if got > 16 {
		t.Errorf("a decode step of 16 requests allocates %v times, want <= 16", got)
	}
}

// TestSpecStepAllocs bounds a steady speculative decode step (4
// requests, n-gram drafts of 4 tokens on a repetitive prompt): the
// proposer, the scheduler's chunk and the runner's accepted samples reuse
// their buffers, so speculation adds no per-step allocation beyond the
// amortized growth of TestDecodeStepAllocs.
func TestSpecStepAllocs(t *testing.T) {
	var tail []int32
	for range 8 {
		tail = append(tail, 5, 9, 17, 33)
	}
	cfg := Config{NumBlocks: 256, MaxSeqs: 4, Spec: Speculation{Method: "ngram", Tokens: 4}}
	e, chs := decodingWith(t, 4, cfg, tail)
	got := testing.AllocsPerRun(50, func() {
		e.step()
		drain(chs)
	})
	st := e.Stats()
	t.Logf("steady-state speculative step, 4 requests: %v allocations; %d drafts, %d accepted of %d", got, st.SpecDrafts, st.SpecAcceptedTokens, st.SpecDraftTokens)
	if st.Running != 4 || st.SpecDrafts == 0 {
		t.Fatalf("stats: %+v", st)
	}
	if got > 8 {
		t.Errorf("a speculative step of 4 requests allocates %v times, want <= 8", got)
	}
}

// tinyModel writes and loads a small random-weight model.
func tinyModel(t testing.TB) *model.Model {
	t.Helper()
	_, m := tinymodel.Model(t, tinymodel.Spec, "Q8_0", 11, model.Options{})
	return m
}

// decoding returns an engine, stepped by hand (no loop goroutine), whose
// n requests have computed their prompts and decode one token a step.
func decoding(t testing.TB, n int) (*Engine, []<-chan Event) {
	t.Helper()
	return decodingWith(t, n, Config{NumBlocks: 64 * n, MaxSeqs: n}, []int32{2, 3})
}

// decodingWith is decoding with cfg, request i's prompt i+1 then tail.
func decodingWith(t testing.TB, n int, cfg Config, tail []int32) (*Engine, []<-chan Event) {
	t.Helper()
	e, err := newEngine(tinyModel(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var chs []<-chan Event
	for i := range n {
		ch, err := e.Submit(context.Background(), Request{Prompt: append([]int32{int32(i + 1)}, tail...), Params: sample.Params{TopP: 1, RepetitionPenalty: 1}})
		if err != nil {
			t.Fatal(err)
		}
		chs = append(chs, ch)
	}
	if !e.intake() {
		t.Fatal("intake: closed")
	}
	for range 5 {
		e.step()
		drain(chs)
	}
	return e, chs
}

func drain(chs []<-chan Event) {
	for _, ch := range chs {
		for len(ch) > 0 {
			<-ch
		}
	}
}

// TestEngineOverhead runs 64 decode streams on the tiny model and reports
// the share of a step's wall time spent outside the model's forward
// (scheduling, batch building, sampling, bookkeeping, streaming). On a
// model this small the forward is tiny, so the share is an upper bound of
// a real model's; the target is < 5% at 64 streams on a real one.
// Run without -race for meaningful numbers:
//
//	go test -run TestEngineOverhead -v ./engine/
func TestEngineOverhead(t *testing.T) {
	const streams, steps = 64, 200
	e, chs := decoding(t, streams)
	before := e.ctr
	for range steps {
		e.step()
		drain(chs)
	}
	c := e.ctr
	if c.Steps-before.Steps != steps || e.sched.NumRunning() != streams {
		t.Fatalf("ran %d steps with %d running", c.Steps-before.Steps, e.sched.NumRunning())
	}
	step, fwd, smp := c.StepTime-before.StepTime, c.ForwardTime-before.ForwardTime, c.SampleTime-before.SampleTime
	if step <= 0 || fwd <= 0 || fwd > step || smp > step-fwd {
		t.Fatalf("times: step %v, forward %v, sample %v", step, fwd, smp)
	}
	over := step - fwd
	t.Logf("%d streams, %d decode steps: %v a step, forward %v; overhead %v a step = %.1f%% (sampling %.1f%%, the rest %.1f%%)",
		streams, steps, step/steps, fwd/steps, over/steps,
		100*float64(over)/float64(step), 100*float64(smp)/float64(step), 100*float64(over-smp)/float64(step))
}
