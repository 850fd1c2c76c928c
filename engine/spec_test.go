package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"kiln/engine"
	"kiln/sample"
	"kiln/spec"
)

// specConfig is cfg with n-gram speculation of k tokens, speculating
// whatever the number of running requests (the policy is tested apart).
func specConfig(cfg engine.Config, k int) engine.Config {
	cfg.Spec = engine.Speculation{Method: "ngram", Tokens: k, MaxSeqs: 64}
	return cfg
}

// repetitive is a prompt made of a repeated phrase: n-gram lookups hit at
// once, and the tiny model's greedy output soon loops on its own.
func repetitive(n int) []int32 {
	phrase := []int32{17, 203, 45, 45, 118, 9, 260, 31}
	var p []int32
	for len(p) < n {
		p = append(p, phrase...)
	}
	return p[:n]
}

func sameResult(t *testing.T, what string, want, got *result) {
	t.Helper()
	if !slices.Equal(want.tokens, got.tokens) {
		t.Errorf("%s: tokens with speculation %v\n want %v", what, got.tokens, want.tokens)
	}
	if !slices.Equal(want.logprobs, got.logprobs) {
		t.Errorf("%s: logprobs differ with speculation", what)
	}
	if want.final.Reason != got.final.Reason || want.final.Usage.CompletionTokens != got.final.Usage.CompletionTokens {
		t.Errorf("%s: final %s/%d tokens, want %s/%d", what, got.final.Reason, got.final.Usage.CompletionTokens,
			want.final.Reason, want.final.Usage.CompletionTokens)
	}
}

// TestSpecExactAlone: one request at a time, greedy and seeded sampling,
// gives the same tokens and logprobs with k = 1..8 drafted tokens as
// without speculation, and drafts are accepted (the counters say so).
func TestSpecExactAlone(t *testing.T) {
	m, _ := tiny(t)
	seed := uint64(7)
	reqs := []engine.Request{
		{Prompt: repetitive(40), Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 60, Logprobs: true, TopLogprobs: 3}},
		{Prompt: repetitive(5), Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 13, Logprobs: true}},
		{Prompt: repetitive(30), Params: sample.Params{Temperature: 0.8, TopK: 20, TopP: 0.95, RepetitionPenalty: 1.05,
			MaxTokens: 50, Logprobs: true, Seed: &seed}},
	}
	base := make([]*result, len(reqs))
	for i, req := range reqs {
		base[i] = run(t, newEngine(t, m, engine.Config{NumBlocks: 64}), req)
	}
	for k := 1; k <= 8; k++ {
		e := newEngine(t, m, specConfig(engine.Config{NumBlocks: 64}, k))
		for i, req := range reqs {
			sameResult(t, "k="+string(rune('0'+k))+" request "+string(rune('0'+i)), base[i], run(t, e, req))
		}
		st := e.Stats()
		t.Logf("k=%d: %d drafts, %d tokens drafted, %d accepted, by position %v", k, st.SpecDrafts, st.SpecDraftTokens,
			st.SpecAcceptedTokens, st.SpecAcceptedAt[:k])
		if st.SpecDrafts == 0 || st.SpecAcceptedTokens == 0 || st.SpecDraftTokens > int64(k)*st.SpecDrafts {
			t.Errorf("k=%d: counters %d drafts, %d drafted, %d accepted: want drafts accepted", k, st.SpecDrafts, st.SpecDraftTokens, st.SpecAcceptedTokens)
		}
		var sum int64
		for j, n := range st.SpecAcceptedAt {
			sum += n
			if j > 0 && n > st.SpecAcceptedAt[j-1] {
				t.Errorf("k=%d: acceptance by position %v grows", k, st.SpecAcceptedAt)
			}
		}
		if sum != st.SpecAcceptedTokens {
			t.Errorf("k=%d: acceptance by position %v sums to %d, accepted %d", k, st.SpecAcceptedAt, sum, st.SpecAcceptedTokens)
		}
		// Fewer steps than tokens: accepted drafts saved forwards.
		if st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
			t.Errorf("k=%d: blocks held after every request ended: %+v", k, st.KV)
		}
	}
}

// TestSpecExactTogether: the 16 mixed requests (one seeded sampled),
// submitted at staggered steps into a pool small enough to preempt, with
// prompts chunked at 64 tokens a step and speculation on, give each
// request's tokens and logprobs alone without speculation.
func TestSpecExactTogether(t *testing.T) {
	m, _ := tiny(t)
	reqs := mixed()
	for i := range reqs {
		if i%4 == 1 { // some copy-heavy prompts among them
			reqs[i].Prompt = repetitive(len(reqs[i].Prompt))
		}
	}
	alone := make([]*result, len(reqs))
	for i, req := range reqs {
		e, err := engine.New(m, engine.Config{NumBlocks: 64})
		if err != nil {
			t.Fatal(err)
		}
		alone[i] = run(t, e, req)
		e.Close()
	}
	for _, k := range []int{2, 5, 8} {
		e := newEngine(t, m, specConfig(engine.Config{NumBlocks: 48, MaxBatchedTokens: 64, MaxSeqs: 16}, k))
		together := staggered(t, e, reqs)
		st := e.Stats()
		t.Logf("k=%d: %d preemptions, %d steps, %d drafts, %d drafted, %d accepted", k, st.Preemptions, st.Steps,
			st.SpecDrafts, st.SpecDraftTokens, st.SpecAcceptedTokens)
		if st.Preemptions == 0 || st.SpecAcceptedTokens == 0 {
			t.Errorf("k=%d: %d preemptions, %d accepted drafted tokens; want both", k, st.Preemptions, st.SpecAcceptedTokens)
		}
		for i := range reqs {
			sameResult(t, "request "+string(rune('a'+i)), alone[i], together[i])
		}
		if st.Running != 0 || st.Waiting != 0 || st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
			t.Errorf("k=%d: after every request ended: %+v", k, st)
		}
	}
}

// TestSpecEnds: a stop token, a stop string and max_tokens that fall
// inside an accepted run end the completion at the same token as
// without speculation.
func TestSpecEnds(t *testing.T) {
	m, tok := tiny(t)
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 48}
	prompt := repetitive(24)
	base := run(t, newEngine(t, m, engine.Config{NumBlocks: 64, Tokenizer: tok}), engine.Request{Prompt: prompt, Params: p, IgnoreEOS: true})
	e := newEngine(t, m, specConfig(engine.Config{NumBlocks: 64, Tokenizer: tok}, 8))
	got := run(t, e, engine.Request{Prompt: prompt, Params: p, IgnoreEOS: true})
	sameResult(t, "base", base, got)
	if e.Stats().SpecAcceptedTokens == 0 {
		t.Fatalf("no drafted token accepted: the test proves nothing (stats %+v)", e.Stats())
	}

	for _, n := range []int{1, 3, 7, 10, 21} {
		q := p
		q.MaxTokens = n
		r := run(t, e, engine.Request{Prompt: prompt, Params: q, IgnoreEOS: true})
		if !slices.Equal(r.tokens, base.tokens[:n]) || r.final.Reason != engine.Length {
			t.Errorf("max tokens %d: %v (%s), want %v", n, r.tokens, r.final.Reason, base.tokens[:n])
		}
	}
	for _, at := range []int{4, 11, 30} {
		q := p
		q.StopTokens = []int32{base.tokens[at]}
		want := base.tokens[:slices.Index(base.tokens, base.tokens[at])+1]
		r := run(t, e, engine.Request{Prompt: prompt, Params: q, IgnoreEOS: true})
		if !slices.Equal(r.tokens, want) || r.final.Reason != engine.Stop {
			t.Errorf("stop token %d: %v (%s), want %v", base.tokens[at], r.tokens, r.final.Reason, want)
		}
	}
	text := base.text
	for _, at := range []int{len(text) / 3, len(text) * 2 / 3} {
		stop := text[at : at+2]
		q := p
		q.Stop = []string{stop}
		want := text[:strings.Index(text, stop)]
		r := run(t, e, engine.Request{Prompt: prompt, Params: q, IgnoreEOS: true})
		ref := run(t, newEngine(t, m, engine.Config{NumBlocks: 64, Tokenizer: tok}), engine.Request{Prompt: prompt, Params: q, IgnoreEOS: true})
		if r.text != want || r.final.Reason != engine.Stop {
			t.Errorf("stop string %q: %q (%s), want %q", stop, r.text, r.final.Reason, want)
		}
		sameResult(t, "stop string", ref, r)
	}
	if st := e.Stats(); st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
		t.Errorf("blocks held after every request ended: %+v", st.KV)
	}
}

// TestSpecPolicy: with more running requests than Speculation.MaxSeqs no
// step drafts; a request that opts out (NoSpec) never drafts.
func TestSpecPolicy(t *testing.T) {
	m, _ := tiny(t)
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 30}
	e := newEngine(t, m, specConfig(engine.Config{NumBlocks: 64}, 4))
	run(t, e, engine.Request{Prompt: repetitive(20), Params: p, NoSpec: true})
	if st := e.Stats(); st.SpecDrafts != 0 {
		t.Errorf("an opted-out request drafted: %+v", st.Counters)
	}

	cfg := engine.Config{NumBlocks: 64, MaxSeqs: 8}
	cfg.Spec = engine.Speculation{Method: "ngram", Tokens: 4, MaxSeqs: 1}
	e = newEngine(t, m, cfg)
	var chans []<-chan engine.Event
	for range 3 {
		ch, err := e.Submit(context.Background(), engine.Request{Prompt: repetitive(20), Params: p})
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	for _, ch := range chans {
		collect(ch, nil)
	}
	// Three requests submitted at once run together from their first
	// decode (same prompt and length: they end in the same step), so no
	// step begins with at most one running request after the first.
	st := e.Stats()
	t.Logf("policy run: %+v", st.Counters)
	if st.SpecDrafts != 0 {
		t.Errorf("speculated with 3 running requests and MaxSeqs 1: %d drafts", st.SpecDrafts)
	}

	for _, bad := range []engine.Speculation{{Method: "eagle"}, {Method: "ngram", Tokens: engine.MaxSpecTokens + 1},
		{Method: "ngram", NGram: engineNGram(3, 2)}} {
		if _, err := engine.New(m, engine.Config{NumBlocks: 4, Spec: bad}); err == nil {
			t.Errorf("speculation %+v accepted", bad)
		}
	}
}

func engineNGram(lo, hi int) spec.NGram { return spec.NGram{Min: lo, Max: hi} }
