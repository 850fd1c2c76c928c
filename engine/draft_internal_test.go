package engine

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"testing"

	"kiln/runner"
	"kiln/runner/scripted"
	"kiln/sample"
)

// historyLogits is a scripted model's next-token rule: a hash of the
// whole history and the candidate.
func historyLogits(h []int32, row []float32) {
	for i := range row {
		f := fnv.New64a()
		for _, t := range h {
			f.Write([]byte{byte(t), byte(t >> 8)})
		}
		f.Write([]byte{0xff, byte(i)})
		row[i] = float32(f.Sum64()%100000) / 20000
	}
}

// TestDraftStepInvariants steps an engine with a scripted draft by hand
// (staggered arrivals, chunked prompts, n > 1, a pool small enough to
// preempt) and checks after every step that the block pool is consistent
// (kvcache.Pool.Check) and that each live request's draft KV record is
// true: its first kv positions, read back through its block table from
// the draft's store, are the tokens the target's store holds there, and
// kv never runs past the committed tokens. With the prefix cache on, only
// the pool is checked (a cached block filled by undrafted decodes may
// lack draft KV, by design).
func TestDraftStepInvariants(t *testing.T) {
	const vocab, bs = 16, 4
	for _, tc := range []struct {
		blocks   int
		noPrefix bool
		k        int
	}{{22, true, 3}, {22, true, 7}, {40, false, 4}, {200, true, 1}} {
		target := &scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: historyLogits}
		draft := &scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: historyLogits}
		cfg := Config{NumBlocks: tc.blocks, BlockSize: bs, MaxBatchedTokens: 12, NoPrefixCache: tc.noPrefix,
			Spec: Speculation{Method: "draft", Tokens: tc.k, MaxSeqs: 64, DraftBackend: draft}}
		e, err := build(runner.NewBackend(target), cfg)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("%d blocks, prefix cache %v, k=%d", tc.blocks, !tc.noPrefix, tc.k)
		var chs []<-chan Event
		submit := func(i int) {
			prompt := make([]int32, 2+(i*7)%30)
			for j := range prompt {
				prompt[j] = int32((i + j*j) % vocab)
			}
			if i%3 == 0 {
				copy(prompt, []int32{1, 2, 3, 4, 5, 6, 7, 8}) // shared prefixes
			}
			req := Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 8 + (i*5)%25}}
			if i == 4 {
				req.N = 3
			}
			ch, err := e.Submit(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			chs = append(chs, ch)
		}
		steps, drafts, preempted := 0, 0, 0
		for i := 0; steps < 5000; steps++ {
			if i < 10 && (steps%3 == 0 || e.sched.Done()) {
				submit(i)
				i++
			}
			if e.sched.Done() && i == 10 && e.Stats().Waiting == 0 {
				break
			}
			if !e.intake() { // it sleeps only when nothing is queued or running
				t.Fatal("closed")
			}
			e.step()
			for _, ch := range chs {
				for len(ch) > 0 {
					if ev := <-ch; ev.Err != nil {
						t.Fatalf("%s: %v", what, ev.Err)
					}
				}
			}
			if err := e.pool.Check(); err != nil {
				t.Fatalf("%s, step %d: %v", what, steps, err)
			}
			drafts, preempted = int(e.ctr.SpecDrafts), int(e.ctr.Preemptions)
			if !tc.noPrefix {
				continue
			}
			for id, kv := range e.drafter.Records() {
				table := e.pool.TableView(id)
				if n := e.pool.Len(id); kv > n {
					t.Fatalf("%s, step %d: %s has draft KV of %d positions, %d committed", what, steps, id, kv, n)
				}
				want, err := target.History(table, kv)
				if err != nil {
					t.Fatalf("%s, step %d: %s: target: %v", what, steps, id, err)
				}
				want = slices.Clone(want)
				got, err := draft.History(table, kv)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("%s, step %d: %s: draft KV of %d positions %v (%v), target's %v", what, steps, id, kv, got, err, want)
				}
			}
		}
		t.Logf("%s: %d steps, %d drafts, %d preemptions", what, steps, drafts, preempted)
		if !e.sched.Done() || drafts == 0 {
			t.Errorf("%s: done %v after %d steps, %d drafts", what, e.sched.Done(), steps, drafts)
		}
		if st := e.pool.Stats(); st.Free != st.Blocks {
			t.Errorf("%s: %d of %d blocks free at the end", what, st.Free, st.Blocks)
		}
	}
}
