package engine

import (
	"context"
	"testing"

	"kiln/runner"
	"kiln/runner/scripted"
	"kiln/sample"
)

// TestRetire: the scheduler is the registry of live requests; whatever
// else keeps per-request state (the runner's samplers, the draft model's
// KV record, the speculation policy) drops a request once it has left the
// scheduler, however it left: finished, cancelled, refused at admission
// after the scheduler took it (its completions not yet forked included),
// or a beam search's pruned and final members.
func TestRetire(t *testing.T) {
	const vocab, bs = 16, 4
	next := func(h []int32, row []float32) { row[(len(h)*7+int(h[len(h)-1]))%vocab] = 1 }
	cfg := Config{NumBlocks: 64, BlockSize: bs, MaxBatchedTokens: 16,
		Spec: Speculation{Method: "draft", Tokens: 3, MaxSeqs: 64, Adaptive: true, DraftBackend: &scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: next}}}
	e, err := build(runner.NewBackend(&scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: next}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 12}
	ctx, cancel := context.WithCancel(context.Background())
	var chs []<-chan Event
	for _, req := range []Request{
		{Prompt: []int32{1, 2, 3, 4, 5}, Params: p, N: 3},
		{Prompt: []int32{1, 2, 3, 9}, Params: p},
		{Prompt: []int32{4, 4, 4}, Params: p, N: 2, PromptLogits: 1, PromptHidden: true}, // refused by the scripted runner
		{Prompt: []int32{2, 7, 1}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 6}, BeamWidth: 2},
	} {
		ch, err := e.Submit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		chs = append(chs, ch)
	}
	ch, err := e.Submit(ctx, Request{Prompt: []int32{3, 1}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1}})
	if err != nil {
		t.Fatal(err)
	}
	chs = append(chs, ch)
	for steps := 0; steps == 0 || !e.sched.Done(); steps++ {
		if steps == 3 {
			cancel()
		}
		if steps > 500 || !e.intake() {
			t.Fatalf("no end after %d steps", steps)
		}
		if e.sched.Done() {
			break
		}
		e.step()
		drain(chs)
		// Between steps the runner holds exactly the scheduler's requests.
		if n, want := e.runner.Len(), e.liveIDs(); n != want {
			t.Fatalf("step %d: the runner holds %d requests, the scheduler %d", steps, n, want)
		}
	}
	cancel()
	if n := e.runner.Len(); n != 0 {
		t.Errorf("all requests ended, the runner still holds %d", n)
	}
	for id, kv := range e.drafter.Records() {
		t.Errorf("all requests ended, draft KV record %s = %d left", id, kv)
	}
	if len(e.live) != 0 || len(e.beams) != 0 || len(e.sched.Retired(nil)) != 0 || e.ctr.SpecDrafts == 0 {
		t.Errorf("live %d, beams %d, counters %+v", len(e.live), len(e.beams), e.ctr)
	}
}

// liveIDs counts the completions and beam members the engine holds.
func (e *Engine) liveIDs() int { return len(e.live) + len(e.beams) }
