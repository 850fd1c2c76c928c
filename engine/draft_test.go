package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"kiln/engine"
	"kiln/model"
	"kiln/runner/scripted"
	"kiln/sample"
)

// completions submits reqs together (each after the previous one's first
// event: staggered steps) and returns every completion's tokens,
// [request][completion index], and the final events' reasons.
func completions(t *testing.T, e *engine.Engine, reqs []engine.Request) ([][][]int32, [][]engine.FinishReason) {
	t.Helper()
	toks := make([][][]int32, len(reqs))
	reasons := make([][]engine.FinishReason, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		ch, err := e.Submit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		n := max(req.N, 1)
		toks[i], reasons[i] = make([][]int32, n), make([]engine.FinishReason, n)
		first := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			started := false
			for ev := range ch {
				if !started {
					close(first)
					started = true
				}
				if ev.Err != nil {
					t.Errorf("request %d: %v", i, ev.Err)
				}
				if ev.Token >= 0 {
					toks[i][ev.Index] = append(toks[i][ev.Index], ev.Token)
				}
				if ev.Done {
					reasons[i][ev.Index] = ev.Reason
				}
			}
		}()
		<-first
	}
	wg.Wait()
	return toks, reasons
}

// scriptedReqs are requests for a 16-token scripted vocabulary: prompts
// of 1 to 40 tokens, budgets up to 40, one with three completions, one
// seeded sampled (unless greedy), one with a stop token.
func scriptedReqs(greedyOnly bool) []engine.Request {
	seed := uint64(3)
	greedy := sample.Params{TopP: 1, RepetitionPenalty: 1}
	var reqs []engine.Request
	for i := range 7 {
		p := greedy
		p.MaxTokens = 10 + (i*13)%31
		prompt := make([]int32, 1+(i*11)%40)
		for k := range prompt {
			prompt[k] = int32((i*7 + k*k) % 16)
		}
		r := engine.Request{Prompt: prompt, Params: p}
		switch i {
		case 2:
			r.N = 3
		case 4:
			if !greedyOnly {
				r.Params.Temperature, r.Params.Seed = 0.9, &seed
			}
		case 5:
			r.Params.StopTokens = []int32{7}
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// differ is a draft script that agrees with hashLogits on about two
// thirds of histories and proposes another token on the rest.
func differ(h []int32, row []float32) {
	hashLogits(h, row)
	if len(h)%3 == 0 {
		row[(len(h)*5)%len(row)] += 10
	}
}

// TestDraftScripted: with scripted models (the draft's KV is its token
// history, read back through the block tables: a draft position written
// in the wrong block or never written shows as a failed step or a wrong
// draft), every completion, greedy, seeded, forked, chunked, preempted,
// is the same with the draft-model proposer as without speculation, for
// k = 1..8. A draft that is the target's own script is accepted in full
// by greedy requests: the draft's KV is kept exactly in step.
func TestDraftScripted(t *testing.T) {
	const vocab, bs = 16, 4
	var preempted int64 // in the small pool's runs
	for _, pool := range []struct {
		blocks   int
		noPrefix bool
	}{{256, false}, {24, true}} {
		for k := 1; k <= 8; k++ {
			for _, same := range []bool{true, false} {
				// With the target's script as draft, greedy requests only:
				// a sampled one may reject the greedy draft.
				reqs := scriptedReqs(same)
				base, err := engine.NewBackend(&scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: hashLogits},
					engine.Config{NumBlocks: pool.blocks, BlockSize: bs, MaxBatchedTokens: 16, NoPrefixCache: pool.noPrefix})
				if err != nil {
					t.Fatal(err)
				}
				want, wantWhy := completions(t, base, reqs)
				base.Close()
				next := hashLogits
				if !same {
					next = differ
				}
				cfg := engine.Config{NumBlocks: pool.blocks, BlockSize: bs, MaxBatchedTokens: 16, NoPrefixCache: pool.noPrefix,
					Spec: engine.Speculation{Method: "draft", Tokens: k, MaxSeqs: 64,
						DraftBackend: &scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: next}}}
				e, err := engine.NewBackend(&scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: hashLogits}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				got, why := completions(t, e, reqs)
				st := e.Stats()
				e.Close()
				what := fmt.Sprintf("%d blocks, k=%d, same draft %v", pool.blocks, k, same)
				t.Logf("%s: %d preemptions, %d steps, %d drafts, %d of %d accepted", what, st.Preemptions, st.Steps, st.SpecDrafts, st.SpecAcceptedTokens, st.SpecDraftTokens)
				for i := range reqs {
					for j := range want[i] {
						if !slices.Equal(got[i][j], want[i][j]) || why[i][j] != wantWhy[i][j] {
							t.Errorf("%s: request %d.%d: %v (%s)\n want %v (%s)", what, i, j, got[i][j], why[i][j], want[i][j], wantWhy[i][j])
						}
					}
				}
				if st.SpecDrafts == 0 || st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
					t.Errorf("%s: stats %+v", what, st)
				}
				preempted += st.Preemptions
				if same && st.SpecAcceptedTokens != st.SpecDraftTokens {
					t.Errorf("%s: the target's own script as draft: %d of %d drafted tokens accepted", what, st.SpecAcceptedTokens, st.SpecDraftTokens)
				}
				if !same && (st.SpecAcceptedTokens == 0 || st.SpecAcceptedTokens == st.SpecDraftTokens) {
					t.Errorf("%s: a draft that differs: %d of %d accepted", what, st.SpecAcceptedTokens, st.SpecDraftTokens)
				}
			}
		}
	}
	if preempted == 0 {
		t.Errorf("no preemption in the small pool: the test proves less than it says")
	}
}

// TestDraftScriptedGreedyFull: greedy requests alone with the target's
// script as draft accept every drafted token (no sampled request to
// disagree), including prefix-cache hits of an earlier request's prompt.
func TestDraftScriptedGreedyFull(t *testing.T) {
	const vocab, bs = 16, 4
	for k := 1; k <= 8; k++ {
		cfg := engine.Config{NumBlocks: 64, BlockSize: bs, MaxBatchedTokens: 8,
			Spec: engine.Speculation{Method: "draft", Tokens: k, DraftBackend: &scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: hashLogits}}}
		e, err := engine.NewBackend(&scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: hashLogits}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, 2, 3}
		p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 30}
		a := run(t, e, engine.Request{Prompt: prompt, Params: p})
		b := run(t, e, engine.Request{Prompt: prompt, Params: p})
		st := e.Stats()
		e.Close()
		if !slices.Equal(a.tokens, b.tokens) || b.final.Usage.CachedPromptTokens == 0 {
			t.Errorf("k=%d: second run %v (cached %d), first %v", k, b.tokens, b.final.Usage.CachedPromptTokens, a.tokens)
		}
		if st.SpecDraftTokens == 0 || st.SpecAcceptedTokens != st.SpecDraftTokens {
			t.Errorf("k=%d: %d of %d drafted tokens accepted, want all", k, st.SpecAcceptedTokens, st.SpecDraftTokens)
		}
	}
}

// synthModel writes and loads a synthetic model of the tiny shape with
// the given layers (the same seed: the same embeddings, head and first
// layers), on pool if not nil.
func synthModel(t testing.TB, layers int, pool *model.Model) *model.Model {
	t.Helper()
	opts := model.Options{Threads: 2}
	if pool != nil {
		opts.Pool = pool.Pool()
	}
	m, err := model.Load(synthFile(t, layers), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func draftConfig(cfg engine.Config, draft *model.Model, k int) engine.Config {
	cfg.Spec = engine.Speculation{Method: "draft", Draft: draft, Tokens: k, MaxSeqs: 64}
	return cfg
}

// TestDraftSelf: the target's own file as the draft (loaded again, on the
// target's worker pool): greedy output identical to no speculation and
// at least 95% of drafted tokens accepted, k = 1..8; seeded sampling
// identical too.
func TestDraftSelf(t *testing.T) {
	m, _ := tiny(t)
	d := synthModel(t, 2, m)
	seed := uint64(5)
	greedy := engine.Request{Prompt: repetitive(20), Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 40, Logprobs: true}}
	seeded := engine.Request{Prompt: repetitive(9), Params: sample.Params{Temperature: 0.8, TopK: 20, TopP: 0.95, RepetitionPenalty: 1, MaxTokens: 30, Logprobs: true, Seed: &seed}}
	wantG := run(t, newEngine(t, m, engine.Config{NumBlocks: 64}), greedy)
	wantS := run(t, newEngine(t, m, engine.Config{NumBlocks: 64}), seeded)
	for k := 1; k <= 8; k++ {
		e := newEngine(t, m, draftConfig(engine.Config{NumBlocks: 64}, d, k))
		sameResult(t, fmt.Sprintf("k=%d greedy", k), wantG, run(t, e, greedy))
		st := e.Stats()
		rate := float64(st.SpecAcceptedTokens) / float64(st.SpecDraftTokens)
		t.Logf("k=%d: %d drafts, %d of %d accepted (%.3f), draft time %v of %v", k, st.SpecDrafts, st.SpecAcceptedTokens, st.SpecDraftTokens, rate, st.DraftTime, st.StepTime)
		if st.SpecDraftTokens == 0 || rate < 0.95 {
			t.Errorf("k=%d: the target as its own draft: acceptance %.3f, want >= 0.95", k, rate)
		}
		sameResult(t, fmt.Sprintf("k=%d seeded", k), wantS, run(t, e, seeded))
	}
}

// TestDraftTogether: the 16 mixed requests (one seeded sampled) with a
// one-layer draft of the same weights, submitted at staggered steps into
// a pool small enough to preempt, prompts chunked at 64 tokens a step,
// plus n > 1 completions, give each request's tokens and logprobs alone
// without speculation.
func TestDraftTogether(t *testing.T) {
	m, _ := tiny(t)
	d := synthModel(t, 1, m)
	reqs := mixed()
	for i := range reqs {
		if i%4 == 1 {
			reqs[i].Prompt = repetitive(len(reqs[i].Prompt))
		}
	}
	alone := make([]*result, len(reqs))
	for i, req := range reqs {
		alone[i] = run(t, newEngine(t, m, engine.Config{NumBlocks: 64}), req)
	}
	for _, k := range []int{1, 3, 8} {
		e := newEngine(t, m, draftConfig(engine.Config{NumBlocks: 48, MaxBatchedTokens: 64, MaxSeqs: 16}, d, k))
		together := staggered(t, e, reqs)
		st := e.Stats()
		t.Logf("k=%d: %d preemptions, %d steps, %d drafts, %d of %d accepted", k, st.Preemptions, st.Steps, st.SpecDrafts, st.SpecAcceptedTokens, st.SpecDraftTokens)
		if st.Preemptions == 0 || st.SpecAcceptedTokens == 0 {
			t.Errorf("k=%d: %d preemptions, %d accepted drafted tokens; want both", k, st.Preemptions, st.SpecAcceptedTokens)
		}
		for i := range reqs {
			sameResult(t, fmt.Sprintf("k=%d request %d", k, i), alone[i], together[i])
		}
		if st.Running != 0 || st.Waiting != 0 || st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
			t.Errorf("k=%d: after every request ended: %+v", k, st)
		}
	}
	// n > 1 and a prefix-cache hit, with the target itself as the draft.
	self := synthModel(t, 2, m)
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 25}
	seed := uint64(9)
	q := sample.Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1, MaxTokens: 25, Seed: &seed}
	batch := []engine.Request{{Prompt: repetitive(37), Params: q, N: 3}, {Prompt: repetitive(37), Params: p}, {Prompt: repetitive(50), Params: p, N: 2}}
	want, _ := completions(t, newEngine(t, m, engine.Config{NumBlocks: 64}), batch)
	e := newEngine(t, m, draftConfig(engine.Config{NumBlocks: 64}, self, 4))
	got, _ := completions(t, e, batch)
	for i := range batch {
		for j := range want[i] {
			if !slices.Equal(got[i][j], want[i][j]) {
				t.Errorf("n > 1: request %d.%d: %v\n want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	if st := e.Stats(); st.SpecAcceptedTokens == 0 || st.KV.Free != st.KV.Blocks {
		t.Errorf("n > 1: stats %+v", st)
	}
}

// TestDraftErrors: a draft of another vocabulary size, or none, is refused.
func TestDraftErrors(t *testing.T) {
	m, _ := tiny(t)
	for _, s := range []engine.Speculation{
		{Method: "draft"},
		{Method: "draft", DraftBackend: &scripted.Model{VocabSize: 319, Ctx: 64, BlockSize: 16}},
	} {
		_, err := engine.New(m, engine.Config{NumBlocks: 8, Spec: s})
		if err == nil || !strings.Contains(err.Error(), "draft") {
			t.Errorf("speculation %+v: error %v", s, err)
		}
	}
}

// TestDraftAdaptive: with the acceptance-aware policy a draft that is
// never right soon stops being asked for (far fewer drafted tokens than
// without the policy), one that is always right drafts the full k, and
// the output is the same either way.
func TestDraftAdaptive(t *testing.T) {
	const vocab, bs, k = 16, 4, 6
	wrong := func(h []int32, row []float32) {
		hashLogits(h, row)
		best := 0
		for i, v := range row {
			if v > row[best] {
				best = i
			}
		}
		row[(best+1)%len(row)] = 100 // never the target's greedy token
	}
	reqs := scriptedReqs(true)
	base, err := engine.NewBackend(&scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: hashLogits},
		engine.Config{NumBlocks: 256, BlockSize: bs, MaxBatchedTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := completions(t, base, reqs)
	base.Close()
	stats := map[string]engine.Stats{}
	for _, name := range []string{"wrong", "wrong adaptive", "right adaptive"} {
		next := hashLogits
		if strings.HasPrefix(name, "wrong") {
			next = wrong
		}
		cfg := engine.Config{NumBlocks: 256, BlockSize: bs, MaxBatchedTokens: 16,
			Spec: engine.Speculation{Method: "draft", Tokens: k, MaxSeqs: 64, Adaptive: strings.HasSuffix(name, "adaptive"), DraftCost: 0.1,
				DraftBackend: &scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: next}}}
		e, err := engine.NewBackend(&scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: hashLogits}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := completions(t, e, reqs)
		st := e.Stats()
		e.Close()
		stats[name] = st
		t.Logf("%s: %d steps, %d drafts, %d of %d accepted", name, st.Steps, st.SpecDrafts, st.SpecAcceptedTokens, st.SpecDraftTokens)
		for i := range reqs {
			for j := range want[i] {
				if !slices.Equal(got[i][j], want[i][j]) {
					t.Errorf("%s: request %d.%d: %v\n want %v", name, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
	if w, a := stats["wrong"], stats["wrong adaptive"]; a.SpecDraftTokens*3 > w.SpecDraftTokens || a.SpecAcceptedTokens != 0 {
		t.Errorf("a draft never right: %d tokens drafted adaptively, %d without the policy", a.SpecDraftTokens, w.SpecDraftTokens)
	}
	// Always right: every token accepted, and the drafts grow to the full
	// k as the acceptance record leaves its prior (1/2): on average at
	// least half of k over these short requests, and full-length drafts.
	if r := stats["right adaptive"]; r.SpecAcceptedTokens != r.SpecDraftTokens || 2*r.SpecDraftTokens < r.SpecDrafts*k || r.SpecAcceptedAt[k-1] == 0 {
		t.Errorf("a draft always right: %d drafts of %d tokens (%d of full length %d), want up to %d each", r.SpecDrafts, r.SpecDraftTokens, r.SpecAcceptedAt[k-1], k, k)
	}
}

// TestDraftShortContext: a draft model whose context is shorter than the
// target's drafts only while its positions fit, and the output is the
// same as without speculation.
func TestDraftShortContext(t *testing.T) {
	const vocab, bs = 16, 4
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 60}
	req := engine.Request{Prompt: []int32{3, 1, 4, 1, 5, 9, 2, 6}, Params: p}
	base, err := engine.NewBackend(&scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: hashLogits}, engine.Config{NumBlocks: 64, BlockSize: bs})
	if err != nil {
		t.Fatal(err)
	}
	want := run(t, base, req)
	base.Close()
	cfg := engine.Config{NumBlocks: 64, BlockSize: bs, MaxBatchedTokens: 4,
		Spec: engine.Speculation{Method: "draft", Tokens: 5, DraftBackend: &scripted.Model{VocabSize: vocab, Ctx: 30, BlockSize: bs, Next: hashLogits}}}
	e, err := engine.NewBackend(&scripted.Model{VocabSize: vocab, Ctx: 256, BlockSize: bs, Next: hashLogits}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got := run(t, e, req)
	if !slices.Equal(got.tokens, want.tokens) || got.final.Err != nil {
		t.Errorf("tokens %v (%v)\n want %v", got.tokens, got.final.Err, want.tokens)
	}
	if st := e.Stats(); st.SpecDrafts == 0 || st.SpecAcceptedTokens != st.SpecDraftTokens || st.SpecDraftTokens > 30 {
		t.Errorf("%d drafts, %d of %d accepted: want drafts only below position 30, all accepted", st.SpecDrafts, st.SpecAcceptedTokens, st.SpecDraftTokens)
	}
}
