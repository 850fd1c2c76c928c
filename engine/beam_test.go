package engine_test

import (
	"cmp"
	"context"
	"errors"
	"hash/fnv"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"kiln/engine"
	"kiln/model"
	"kiln/runner/scripted"
	"kiln/sample"
)

// beamResult is one delivered beam search sequence.
type beamResult struct {
	tokens []int32
	cum    float64
	reason engine.FinishReason
}

// beamRun submits a beam search and collects its n sequences.
func beamRun(t *testing.T, e *engine.Engine, req engine.Request) []beamResult {
	t.Helper()
	ch, err := e.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return beamCollect(t, ch, max(req.N, 1))
}

func beamCollect(t *testing.T, ch <-chan engine.Event, n int) []beamResult {
	t.Helper()
	rs := collectN(t, ch, n)
	out := make([]beamResult, n)
	for i, r := range rs {
		if r.final.Reason == engine.Abort {
			t.Fatalf("sequence %d aborted: %v", i, r.final.Err)
		}
		out[i] = beamResult{tokens: r.tokens, cum: r.final.CumLogprob, reason: r.final.Reason}
		sum := 0.0
		for _, lp := range r.logprobs {
			sum += float64(lp)
		}
		if sum != r.final.CumLogprob {
			t.Fatalf("sequence %d: logprobs sum to %v, CumLogprob %v", i, sum, r.final.CumLogprob)
		}
	}
	return out
}

func beamParams(maxTokens int, stops ...int32) sample.Params {
	return sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: maxTokens, StopTokens: stops}
}

// TestBeamWidthOneIsGreedy: one beam keeps the argmax each round (no stop
// token: the tiny model's engine has no tokenizer), so it is greedy, with
// the same logprobs, and gives its blocks back. Its rounds are served by
// the prefix cache.
func TestBeamWidthOneIsGreedy(t *testing.T) {
	m, _ := tiny(t)
	prompt := []int32{5, 17, 99, 3, 250, 7, 7, 40}
	e := newEngine(t, m, engine.Config{NumBlocks: 16})
	greedy := run(t, e, engine.Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 20, Logprobs: true}})
	e = newEngine(t, m, engine.Config{NumBlocks: 16}) // the search starts with an empty prefix cache
	got := beamRun(t, e, engine.Request{Prompt: prompt, Params: beamParams(20), BeamWidth: 1})
	if !slices.Equal(got[0].tokens, greedy.tokens) || got[0].reason != engine.Length {
		t.Fatalf("beam width 1: %v (%s)\ngreedy:       %v", got[0].tokens, got[0].reason, greedy.tokens)
	}
	cum := 0.0
	for _, lp := range greedy.logprobs {
		cum += float64(lp)
	}
	if got[0].cum != cum {
		t.Fatalf("cumulative logprob %v, greedy's %v", got[0].cum, cum)
	}
	st := e.Stats()
	if st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks || st.Running != 0 {
		t.Fatalf("after the search: %+v", st)
	}
	// The first round computes the prompt; each later round's request
	// finds all but its last token in the prefix cache (whole blocks, and
	// a copy of the last round's partial block) and computes that token
	// only. (Before partial blocks were cached: 174 tokens, every round
	// recomputing its partial block.)
	if got, want := st.ComputedTokens, int64(len(prompt)+19); got != want {
		t.Errorf("the search computed %d tokens; want %d (the prompt, then one token a round)", got, want)
	}
}

// hashLogits are a scripted model's logits: a pseudo-random function of
// the whole history, with distinct values.
func hashLogits(history []int32, row []float32) {
	for i := range row {
		h := fnv.New64a()
		for _, t := range history {
			h.Write([]byte{byte(t), byte(t >> 8)})
		}
		h.Write([]byte{0xff, byte(i)})
		row[i] = float32(h.Sum64()%100000) / 20000 // [0, 5)
	}
}

// logSoftmax is a reference: float64 log-probabilities of a row.
func logSoftmax(row []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range row {
		m = math.Max(m, float64(v))
	}
	s := 0.0
	for _, v := range row {
		s += math.Exp(float64(v) - m)
	}
	out := make([]float64, len(row))
	for i, v := range row {
		out[i] = float64(v) - m - math.Log(s)
	}
	return out
}

type refSeq struct {
	tokens  []int32
	cum     float64
	score   float64
	stopped bool
}

func score(cum float64, length int, penalty float64) float64 {
	return cum / math.Pow(float64(length), penalty)
}

// TestBeamExhaustive: on a 3-token vocabulary (token 2 stops) a search of
// width 9 keeps every live prefix of 3 tokens, so its 5 best sequences are
// the exhaustive search's 5 best of all 15 possible ones (by cumulative
// logprob / length^penalty, length counting the prompt and not a final
// stop), for several length penalties. The scripted model reads each
// beam's history back through its block table: the branches' shared and
// copied blocks must hold the right tokens.
func TestBeamExhaustive(t *testing.T) {
	const vocab, stop, maxTokens = 3, 2, 3
	prompt := []int32{1, 0, 1, 1, 0}
	row := make([]float32, vocab)
	lps := func(gen []int32) []float64 {
		clear(row)
		hashLogits(slices.Concat(prompt, gen), row)
		return logSoftmax(row)
	}
	for _, penalty := range []float64{1, 0.5, 2, -1} {
		// Exhaustive: every sequence of up to 3 tokens that ends at its
		// first stop, or has 3 tokens.
		var all []refSeq
		var walk func(gen []int32, cum float64)
		walk = func(gen []int32, cum float64) {
			lp := lps(gen)
			for tok := range int32(vocab) {
				g, c := append(slices.Clip(gen), tok), cum+lp[tok]
				switch {
				case tok == stop:
					all = append(all, refSeq{g, c, score(c, len(prompt)+len(g)-1, penalty), true})
				case len(g) == maxTokens:
					all = append(all, refSeq{g, c, score(c, len(prompt)+len(g), penalty), false})
				default:
					walk(g, c)
				}
			}
		}
		walk(nil, 0)
		if len(all) != 15 {
			t.Fatalf("%d sequences enumerated", len(all))
		}
		slices.SortStableFunc(all, func(a, b refSeq) int { return cmp.Compare(b.score, a.score) })

		sm := &scripted.Model{VocabSize: vocab, Ctx: 64, BlockSize: 2, Next: hashLogits}
		e, err := engine.NewBackend(sm, engine.Config{NumBlocks: 64, BlockSize: 2, MaxSeqs: 9})
		if err != nil {
			t.Fatal(err)
		}
		got := beamRun(t, e, engine.Request{Prompt: prompt, Params: beamParams(maxTokens, stop), BeamWidth: 9, N: 5, LengthPenalty: penalty})
		for i, g := range got {
			w := all[i]
			if !slices.Equal(g.tokens, w.tokens) || math.Abs(g.cum-w.cum) > 1e-5 || (g.reason == engine.Stop) != w.stopped {
				t.Errorf("penalty %v, sequence %d: %v cum %.6f (%s); exhaustive search: %v cum %.6f (stopped %v)", penalty, i, g.tokens, g.cum, g.reason, w.tokens, w.cum, w.stopped)
			}
		}
		if st := e.Stats(); st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
			t.Errorf("penalty %v: blocks held after the search: %+v", penalty, st.KV)
		}
		e.Close()
	}
}

// refBeam is vLLM's beam_search written out plainly over a model: each
// beam's row from a fresh forward of its whole sequence (no shared KV),
// the 2W best tokens of each, stop tokens to the finished list, the W
// best others kept, for maxTokens rounds; then the n best of all.
func refBeam(t *testing.T, m *model.Model, prompt []int32, w, n, maxTokens int, stop int32, penalty float64) []refSeq {
	t.Helper()
	vocab := m.Config.Vocab
	beams := []refSeq{{}}
	var done []refSeq
	for range maxTokens {
		var cands []refSeq
		for _, b := range beams {
			seq := slices.Concat(prompt, b.tokens)
			kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: (len(seq) + 15) / 16, BlockSize: 16})
			if err != nil {
				t.Fatal(err)
			}
			batch := model.Batch{Tokens: seq, SeqStarts: []int32{0, int32(len(seq))}, ContextLens: []int32{int32(len(seq))}, LogitRows: []int32{int32(len(seq) - 1)}}
			batch.BlockTables = [][]int32{make([]int32, kv.NumBlocks)}
			for i := range batch.BlockTables[0] {
				batch.BlockTables[0][i] = int32(i)
			}
			for i := range seq {
				batch.Positions = append(batch.Positions, int32(i))
			}
			logits, err := m.Forward(&batch, kv)
			if err != nil {
				t.Fatal(err)
			}
			lp := logSoftmax(logits[:vocab])
			ids := make([]int32, vocab)
			for i := range ids {
				ids[i] = int32(i)
			}
			slices.SortStableFunc(ids, func(a, b int32) int { return cmp.Compare(logits[b], logits[a]) })
			for _, tok := range ids[:2*w] {
				g, c := append(slices.Clip(b.tokens), tok), b.cum+lp[tok]
				if tok == stop {
					done = append(done, refSeq{g, c, score(c, len(prompt)+len(g)-1, penalty), true})
				} else {
					cands = append(cands, refSeq{g, c, score(c, len(prompt)+len(g), penalty), false})
				}
			}
		}
		slices.SortStableFunc(cands, func(a, b refSeq) int { return cmp.Compare(b.score, a.score) })
		beams = cands[:min(w, len(cands))]
	}
	all := append(done, beams...)
	slices.SortStableFunc(all, func(a, b refSeq) int { return cmp.Compare(b.score, a.score) })
	return all[:n]
}

// TestBeamReference: on the tiny model, a width-3 search with a stop
// token equals the plain reference search; alone, and again in a small
// pool among other requests that makes the scheduler preempt (members
// recomputed, rounds waiting for them), with the same result and every
// block back.
func TestBeamReference(t *testing.T) {
	m, _ := tiny(t)
	prompt := make([]int32, 37)
	for i := range prompt {
		prompt[i] = int32(i*29%300 + 3)
	}
	// A stop token that the search meets: the greedy run's third token.
	e := newEngine(t, m, engine.Config{NumBlocks: 64})
	greedy := run(t, e, engine.Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 4}})
	stop := greedy.tokens[2]
	const w, n, maxTokens, penalty = 3, 3, 7, 1.3
	want := refBeam(t, m, prompt, w, n, maxTokens, stop, penalty)
	req := engine.Request{Prompt: prompt, Params: beamParams(maxTokens, stop), BeamWidth: w, N: n, LengthPenalty: penalty}
	check := func(name string, got []beamResult) {
		t.Helper()
		for i := range want {
			if !slices.Equal(got[i].tokens, want[i].tokens) || math.Abs(got[i].cum-want[i].cum) > 1e-4 || (got[i].reason == engine.Stop) != want[i].stopped {
				t.Errorf("%s, sequence %d: %v cum %.5f (%s); reference %v cum %.5f (stopped %v)", name, i, got[i].tokens, got[i].cum, got[i].reason, want[i].tokens, want[i].cum, want[i].stopped)
			}
		}
	}
	stopped := false
	for _, r := range want {
		stopped = stopped || r.stopped
	}
	t.Logf("reference: %+v (a stopped sequence among the best: %v)", want, stopped)
	check("alone", beamRun(t, e, req))

	// Under pressure: 16 other requests in 48 blocks, chunked prompts.
	e = newEngine(t, m, engine.Config{NumBlocks: 48, MaxBatchedTokens: 64, MaxSeqs: 16})
	var wg sync.WaitGroup
	for _, other := range mixed()[:12] {
		ch, err := e.Submit(context.Background(), other)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); collect(ch, nil) }()
	}
	ch, err := e.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	check("among others", beamCollect(t, ch, n))
	wg.Wait()
	st := e.Stats()
	if st.Preemptions == 0 {
		t.Errorf("no preemptions: the pool is not small enough (%+v)", st)
	}
	if st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks || st.Running != 0 || st.Waiting != 0 {
		t.Errorf("after everything ended: %+v", st)
	}
}

// TestBeamCancel: cancelling a search mid-way (during its third round's
// forward) ends all its sequences with Abort and frees every member's
// blocks; Close does the same to a search in flight.
func TestBeamCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	forwards := 0
	sm := &scripted.Model{VocabSize: 16, Ctx: 64, BlockSize: 2, Next: hashLogits, OnForward: func(*model.Batch) {
		if forwards++; forwards == 3 {
			cancel()
		}
	}}
	e, err := engine.NewBackend(sm, engine.Config{NumBlocks: 64, BlockSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ch, err := e.Submit(ctx, engine.Request{Prompt: []int32{1, 2, 3}, Params: beamParams(10), BeamWidth: 3, N: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range collectN(t, ch, 2) {
		if len(r.tokens) != 0 || r.final.Reason != engine.Abort || !errors.Is(r.final.Err, context.Canceled) {
			t.Errorf("sequence %d: %d tokens, final %+v", i, len(r.tokens), r.final)
		}
	}
	if st := e.Stats(); st.KV.Sequences != 0 || st.Running != 0 || forwards != 3 {
		t.Errorf("after the cancel (%d forwards): %+v", forwards, st)
	}

	sm.OnForward = nil
	ch, err = e.Submit(context.Background(), engine.Request{Prompt: []int32{1, 2, 3}, Params: beamParams(30), BeamWidth: 3})
	if err != nil {
		t.Fatal(err)
	}
	<-time.After(time.Millisecond)
	e.Close()
	for ev := range ch {
		if ev.Done && ev.Reason == engine.Abort && !errors.Is(ev.Err, engine.ErrClosed) {
			t.Errorf("closed search: %+v", ev)
		}
	}
}

// TestBeamErrors: what beam search cannot do is refused at Submit.
func TestBeamErrors(t *testing.T) {
	m, tok := tiny(t)
	e := newEngine(t, m, engine.Config{NumBlocks: 16, Tokenizer: tok, StreamBuffer: 64})
	for name, req := range map[string]engine.Request{
		"width 11":        {Prompt: []int32{1}, Params: beamParams(4), BeamWidth: 11},
		"n > width":       {Prompt: []int32{1}, Params: beamParams(4), BeamWidth: 2, N: 3},
		"no max tokens":   {Prompt: []int32{1}, Params: beamParams(0), BeamWidth: 2},
		"penalty":         {Prompt: []int32{1}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1.2, MaxTokens: 4}, BeamWidth: 2},
		"stop strings":    {Prompt: []int32{1}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 4, Stop: []string{"x"}}, BeamWidth: 2},
		"prompt logits":   {Prompt: []int32{1}, Params: beamParams(4), BeamWidth: 2, PromptLogits: 1},
		"pool too small":  {Prompt: make([]int32, 60), Params: beamParams(40), BeamWidth: 4},
		"stream buffer":   {Prompt: []int32{1}, Params: beamParams(40), BeamWidth: 2, N: 2},
		"length penalty":  {Prompt: []int32{1}, Params: beamParams(4), BeamWidth: 2, LengthPenalty: math.NaN()},
		"negative length": {Prompt: []int32{1}, Params: beamParams(-1), BeamWidth: 2},
		"negative width":  {Prompt: []int32{1}, Params: beamParams(4), BeamWidth: -1},
	} {
		if _, err := e.Submit(context.Background(), req); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
