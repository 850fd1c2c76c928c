package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"kiln/engine"
	"kiln/gguf"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/runner/scripted"
	"kiln/sample"
	"kiln/tokenizer"
)

// tiny writes and loads a small random-weight model and its synthetic
// tokenizer.
func tiny(t testing.TB) (*model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	f := synthFile(t, 2)
	m, err := model.Load(f, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return m, tok
}

// synthFile writes and opens the tiny synthetic shape with the given
// layers; the seed is fixed, so every layer count shares the embeddings,
// the head and the first layers (drafts of the 2-layer model).
func synthFile(t testing.TB, layers int) *gguf.File {
	t.Helper()
	spec := tinymodel.Spec
	spec.Layers = layers
	return tinymodel.File(t, spec, "Q8_0", 11)
}

func newEngine(t testing.TB, m *model.Model, cfg engine.Config) *engine.Engine {
	t.Helper()
	e, err := engine.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

type result struct {
	tokens   []int32
	logprobs []float32
	text     string
	final    engine.Event
}

// collect reads a stream to its end; first (if not nil) is closed at the
// first event.
func collect(ch <-chan engine.Event, first chan<- struct{}) *result {
	r := &result{}
	for ev := range ch {
		if first != nil {
			close(first)
			first = nil
		}
		if ev.Token >= 0 {
			r.tokens = append(r.tokens, ev.Token)
			r.logprobs = append(r.logprobs, ev.Logprob)
		}
		r.text += ev.Text
		if ev.Done {
			r.final = ev
		}
	}
	return r
}

func run(t testing.TB, e *engine.Engine, req engine.Request) *result {
	t.Helper()
	ch, err := e.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return collect(ch, nil)
}

// mixed are 16 requests: prompt lengths 3..~190, budgets 16/64/512,
// greedy with logprobs, and one seeded sampled request with penalties.
func mixed() []engine.Request {
	var reqs []engine.Request
	budgets := []int{16, 64, 512}
	for i := 0; i < 16; i++ {
		prompt := make([]int32, 3+(i*37)%190)
		for k := range prompt {
			prompt[k] = int32((i*131 + k*17 + k*k) % 320)
		}
		p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: budgets[i%3], Logprobs: true}
		if i == 5 {
			seed := uint64(42)
			p.Temperature, p.TopK, p.TopP, p.MinP, p.Seed = 0.9, 40, 0.95, 0.02, &seed
			p.RepetitionPenalty, p.FrequencyPenalty = 1.1, 0.2
		}
		reqs = append(reqs, engine.Request{Prompt: prompt, Params: p})
	}
	return reqs
}

// TestInvariance: each request's tokens and logprobs are identical alone
// (its own roomy engine) and among 15 others submitted at staggered steps
// (each after the previous one's first token) into a pool small enough to
// preempt, with prompts chunked at 64 tokens a step.
func TestInvariance(t *testing.T) {
	m, _ := tiny(t)
	testInvariance(t, m, model.KVF16)
}

// testInvariance is TestInvariance on m with a KV cache of type typ.
func testInvariance(t *testing.T, m *model.Model, typ model.KVType) {
	reqs := mixed()
	alone := make([]*result, len(reqs))
	for i, req := range reqs {
		e, err := engine.New(m, engine.Config{NumBlocks: 64, KVType: typ})
		if err != nil {
			t.Fatal(err)
		}
		alone[i] = run(t, e, req)
		e.Close()
		if f := alone[i].final; f.Reason != engine.Length || len(alone[i].tokens) != req.Params.MaxTokens || f.Usage.CompletionTokens != req.Params.MaxTokens {
			t.Fatalf("request %d alone: %d tokens, final %+v", i, len(alone[i].tokens), f)
		}
	}

	e := newEngine(t, m, engine.Config{NumBlocks: 48, MaxBatchedTokens: 64, MaxSeqs: 16, KVType: typ})
	together := staggered(t, e, reqs)
	st := e.Stats()
	if st.Preemptions == 0 {
		t.Fatalf("no preemptions: the pool is not small enough (stats %+v)", st)
	}
	t.Logf("stats after the batched run: %+v", st)
	for i := range reqs {
		a, b := alone[i], together[i]
		if !slices.Equal(a.tokens, b.tokens) {
			t.Errorf("request %d: tokens alone %v\n together %v", i, a.tokens, b.tokens)
		}
		if !slices.Equal(a.logprobs, b.logprobs) {
			t.Errorf("request %d: logprobs differ alone and together", i)
		}
		if b.final.Reason != engine.Length {
			t.Errorf("request %d together: final %+v", i, b.final)
		}
	}
	if st.Running != 0 || st.Waiting != 0 || st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
		t.Errorf("after every request ended: %+v", st)
	}
}

// TestPrefixHit: the same prompt a second time is served from the prefix
// cache (usage says so) and gives bit-identical tokens and logprobs (raw
// log-softmax of the logits, top 5 included) to a cold run.
func TestPrefixHit(t *testing.T) {
	m, _ := tiny(t)
	testPrefixHit(t, m, model.KVF16)
}

// testPrefixHit is TestPrefixHit on m with a KV cache of type typ.
func testPrefixHit(t *testing.T, m *model.Model, typ model.KVType) {
	prompt := make([]int32, 70)
	for i := range prompt {
		prompt[i] = int32(i*7%300 + 1)
	}
	req := engine.Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 20, Logprobs: true, TopLogprobs: 5}}
	e := newEngine(t, m, engine.Config{NumBlocks: 32, KVType: typ})
	cold := run(t, e, req)
	warm := run(t, e, req)
	if cold.final.Usage.CachedPromptTokens != 0 || warm.final.Usage.CachedPromptTokens != 64 {
		t.Fatalf("cached prompt tokens: cold %d, warm %d; want 0 and 64", cold.final.Usage.CachedPromptTokens, warm.final.Usage.CachedPromptTokens)
	}
	if !slices.Equal(cold.tokens, warm.tokens) || !slices.Equal(cold.logprobs, warm.logprobs) {
		t.Fatalf("prefix hit differs from the cold run:\n cold %v\n warm %v", cold.tokens, warm.tokens)
	}
	if st := e.Stats(); st.KV.PrefixHits != 64 {
		t.Errorf("stats: %d prefix hit tokens, want 64", st.KV.PrefixHits)
	}

	// With the cache off the second run computes its whole prompt, with
	// the same result.
	off := newEngine(t, m, engine.Config{NumBlocks: 32, NoPrefixCache: true, KVType: typ})
	run(t, off, req)
	again := run(t, off, req)
	if again.final.Usage.CachedPromptTokens != 0 || !slices.Equal(again.tokens, cold.tokens) || off.Stats().KV.PrefixHits != 0 {
		t.Fatalf("NoPrefixCache: %d cached tokens, %d hits, tokens %v; want 0, 0 and the cold run's", again.final.Usage.CachedPromptTokens, off.Stats().KV.PrefixHits, again.tokens)
	}
}

// TestCancel: cancelling a request's context ends its stream with Abort
// and context.Canceled, its blocks are free by the time the final event
// is read, and a request running beside it finishes with the same tokens
// as alone.
func TestCancel(t *testing.T) {
	m, _ := tiny(t)
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 200}
	other := engine.Request{Prompt: []int32{5, 6, 7, 8, 9, 10}, Params: p}
	e := newEngine(t, m, engine.Config{NumBlocks: 64})
	want := run(t, e, other)

	e = newEngine(t, m, engine.Config{NumBlocks: 64})
	ctx, cancel := context.WithCancel(context.Background())
	long := engine.Request{Prompt: []int32{1, 2, 3}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1}} // until the pool is full
	lch, err := e.Submit(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	och, err := e.Submit(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *result)
	go func() { done <- collect(och, nil) }()
	for range 5 {
		<-lch
	}
	cancel()
	var final engine.Event
	for ev := range lch {
		final = ev
	}
	if !final.Done || final.Reason != engine.Abort || !errors.Is(final.Err, context.Canceled) {
		t.Fatalf("final event of the cancelled request: %+v", final)
	}
	if st := e.Stats(); st.Aborted != 1 || st.KV.Sequences > 1 {
		t.Fatalf("after the cancelled request's final event: %+v", st)
	}
	got := <-done
	if !slices.Equal(got.tokens, want.tokens) || got.final.Reason != engine.Length {
		t.Fatalf("the other request: %v (%s), alone %v", got.tokens, got.final.Reason, want.tokens)
	}
	if st := e.Stats(); st.KV.Sequences != 0 || st.Finished != 1 {
		t.Fatalf("at the end: %+v", st)
	}

	// A context cancelled before Submit: the request never runs.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	ch, err := e.Submit(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(ch, nil); len(r.tokens) != 0 || r.final.Reason != engine.Abort || !errors.Is(r.final.Err, context.Canceled) {
		t.Fatalf("request with a cancelled context: %d tokens, final %+v", len(r.tokens), r.final)
	}
}

// TestSlowReader: a reader that reads nothing gets its buffer's worth of
// tokens, then a final event with ErrSlowReader; the request's blocks are
// freed and the engine keeps serving.
func TestSlowReader(t *testing.T) {
	m, _ := tiny(t)
	e := newEngine(t, m, engine.Config{NumBlocks: 64, StreamBuffer: 4})
	ch, err := e.Submit(context.Background(), engine.Request{Prompt: []int32{1, 2, 3}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 100}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.Stats().Aborted == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	r := collect(ch, nil)
	if len(r.tokens) != 4 || r.final.Reason != engine.Abort || !errors.Is(r.final.Err, engine.ErrSlowReader) {
		t.Fatalf("%d tokens, final %+v", len(r.tokens), r.final)
	}
	if st := e.Stats(); st.KV.Sequences != 0 {
		t.Fatalf("blocks still held: %+v", st)
	}
	if r := run(t, e, engine.Request{Prompt: []int32{4}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 3}}); len(r.tokens) != 3 {
		t.Fatalf("next request: %+v", r)
	}
}

// TestClose: Close ends every running and queued request with ErrClosed,
// and Submit afterwards fails.
func TestClose(t *testing.T) {
	m, _ := tiny(t)
	e, err := engine.New(m, engine.Config{NumBlocks: 64, MaxSeqs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var chs []<-chan engine.Event
	for i := range 3 {
		ch, err := e.Submit(context.Background(), engine.Request{Prompt: []int32{int32(i + 1)}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1}})
		if err != nil {
			t.Fatal(err)
		}
		chs = append(chs, ch)
	}
	<-chs[0]
	e.Close()
	for i, ch := range chs {
		if r := collect(ch, nil); r.final.Reason != engine.Abort || !errors.Is(r.final.Err, engine.ErrClosed) {
			t.Errorf("request %d: final %+v", i, r.final)
		}
	}
	if _, err := e.Submit(context.Background(), engine.Request{Prompt: []int32{1}, Params: sample.Defaults()}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Submit after Close: %v", err)
	}
}

// TestText: a text prompt is encoded with the tokenizer and the text
// deltas, concatenated, are the decoder's text of the output tokens.
func TestText(t *testing.T) {
	m, tok := tiny(t)
	e := newEngine(t, m, engine.Config{NumBlocks: 64, Tokenizer: tok})
	r := run(t, e, engine.Request{Text: "hello world", Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 12}})
	if r.final.Usage.PromptTokens != len(tok.EncodePrompt("hello world")) {
		t.Errorf("prompt tokens %d", r.final.Usage.PromptTokens)
	}
	d := tok.NewDecoder()
	d.Prime(tok.EncodePrompt("hello world"))
	want := ""
	for _, id := range r.tokens {
		if r.final.Reason == engine.Stop && id == r.tokens[len(r.tokens)-1] && tok.IsEOG(id) {
			continue
		}
		want += d.Add(id)
	}
	want += d.Flush()
	if r.text != want {
		t.Errorf("text %q, want %q", r.text, want)
	}
	t.Logf("%d tokens, %s: %q", len(r.tokens), r.final.Reason, r.text)
}

func TestSubmitErrors(t *testing.T) {
	m, _ := tiny(t)
	e := newEngine(t, m, engine.Config{NumBlocks: 4})
	// Each request's fault is a *RequestError naming the field; the
	// engine's own setup (no tokenizer for a text prompt) is not.
	for _, c := range []struct {
		req   engine.Request
		field string // "" : not the request's fault
	}{
		{engine.Request{Params: sample.Defaults()}, "Prompt"},
		{engine.Request{Prompt: make([]int32, 64), Params: sample.Defaults()}, "Prompt"}, // the pool holds 64 tokens
		{engine.Request{Prompt: []int32{320}, Params: sample.Defaults()}, "Prompt"},
		{engine.Request{Prompt: []int32{1}, Params: sample.Params{}}, "Params"},
		{engine.Request{Prompt: []int32{1}, Params: sample.Defaults(), N: 100000}, "N"},
		{engine.Request{Prompt: []int32{1, 2}, Params: sample.Defaults(), PromptLogits: 3}, "PromptLogits"},
		{engine.Request{Prompt: []int32{1}, Params: sample.Defaults(), BeamWidth: -1}, "BeamWidth"},
		{engine.Request{Text: "hi", Params: sample.Defaults()}, ""}, // no tokenizer
	} {
		_, err := e.Submit(context.Background(), c.req)
		var re *engine.RequestError
		switch {
		case err == nil:
			t.Errorf("Submit(%v) succeeded", fmt.Sprint(c.req.Prompt, c.req.Text))
		case c.field == "" && errors.As(err, &re):
			t.Errorf("Submit(%v): %v is a RequestError; the engine's setup is at fault", fmt.Sprint(c.req.Prompt, c.req.Text), err)
		case c.field != "" && (!errors.As(err, &re) || re.Field != c.field):
			t.Errorf("Submit(%v): %v, want a RequestError on %s", fmt.Sprint(c.req.Prompt, c.req.Text), err, c.field)
		}
	}
}

// TestStopStrings: a stop string ends a request with Stop, and the text
// stops right before it (the stop itself is never emitted); a stop whose
// beginning appears but whose end never does holds that text back only
// until the match fails, so the text is whole. Stop strings are derived
// from a first greedy run.
func TestStopStrings(t *testing.T) {
	m, tok := tiny(t)
	e := newEngine(t, m, engine.Config{NumBlocks: 64, Tokenizer: tok})
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 40}
	base := run(t, e, engine.Request{Text: "once upon", Params: p})
	text := base.text // bytes: the tiny model's text is not valid UTF-8
	if base.final.Reason != engine.Length || len(text) < 20 {
		t.Fatalf("base run: %q (%s)", base.text, base.final.Reason)
	}
	t.Logf("base text %q", base.text)

	// A stop from the middle of the text: three characters at a third.
	stop := text[len(text)/3 : len(text)/3+3]
	want := base.text[:strings.Index(base.text, stop)]
	p.Stop = []string{"\x01never", stop}
	r := run(t, e, engine.Request{Text: "once upon", Params: p})
	if r.text != want || r.final.Reason != engine.Stop {
		t.Fatalf("stop %q: text %q (%s), want %q (stop)", stop, r.text, r.final.Reason, want)
	}
	if r.final.StopString != stop {
		t.Fatalf("StopString %q, want %q", r.final.StopString, stop)
	}
	if len(r.tokens) >= len(base.tokens) || !slices.Equal(r.tokens, base.tokens[:len(r.tokens)]) {
		t.Fatalf("stop %q: tokens %v are not a proper prefix of %v", stop, r.tokens, base.tokens)
	}
	if st := e.Stats(); st.KV.Sequences != 0 {
		t.Fatalf("blocks held after a stop string: %+v", st)
	}

	// A stop that begins like the text at several places but never
	// matches: every held piece is released, the text is whole.
	p.Stop = []string{text[len(text)/2:len(text)/2+2] + "\u2603", text[0:1] + "\u2603"}
	if strings.Contains(text, "\u2603") {
		t.Fatal("the text contains the character that was to rule the stops out")
	}
	r = run(t, e, engine.Request{Text: "once upon", Params: p})
	if r.text != base.text || r.final.Reason != engine.Length || r.final.StopString != "" || !slices.Equal(r.tokens, base.tokens) {
		t.Fatalf("partial stops %q: text %q (%s), want %q (length)", p.Stop, r.text, r.final.Reason, base.text)
	}

	// A stop token id ends the request the same way (it is the last
	// token event; its text is not emitted).
	p.Stop = nil
	p.StopTokens = []int32{base.tokens[5]}
	r = run(t, e, engine.Request{Text: "once upon", Params: p})
	at := slices.Index(base.tokens, base.tokens[5])
	if r.final.Reason != engine.Stop || !slices.Equal(r.tokens, base.tokens[:at+1]) {
		t.Fatalf("stop token %d: tokens %v (%s), want %v", base.tokens[5], r.tokens, r.final.Reason, base.tokens[:at+1])
	}

	// Stop strings without a tokenizer are refused.
	bare := newEngine(t, m, engine.Config{NumBlocks: 16})
	if _, err := bare.Submit(context.Background(), engine.Request{Prompt: []int32{1}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, Stop: []string{"x"}}}); err == nil {
		t.Fatal("stop strings without a tokenizer were accepted")
	}
}

// collectN reads a stream of n completions to its end, by Event.Index.
func collectN(t *testing.T, ch <-chan engine.Event, n int) []*result {
	t.Helper()
	rs := make([]*result, n)
	for i := range rs {
		rs[i] = &result{}
	}
	for ev := range ch {
		if ev.Index < 0 || ev.Index >= n {
			t.Fatalf("event index %d of %d completions", ev.Index, n)
		}
		r := rs[ev.Index]
		if r.final.Done {
			t.Fatalf("completion %d: event after its final one: %+v", ev.Index, ev)
		}
		if ev.Token >= 0 {
			r.tokens = append(r.tokens, ev.Token)
			r.logprobs = append(r.logprobs, ev.Logprob)
		}
		r.text += ev.Text
		if ev.Done {
			r.final = ev
		}
	}
	for i, r := range rs {
		if !r.final.Done {
			t.Fatalf("completion %d has no final event", i)
		}
	}
	return rs
}

// TestN: n completions of one prompt compute the prompt once and share
// its blocks through the prefix cache (the pool holds n copies of the
// partial and output blocks only: no preemption in a pool too small for n
// whole copies); greedy completions
// equal the n = 1 run; seeded sampled completion i equals an n = 1 run
// seeded Seed+i, and so replays.
func TestN(t *testing.T) {
	m, _ := tiny(t)
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = int32(i*13%300 + 1)
	}
	const maxTokens = 8
	greedy := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: maxTokens, Logprobs: true}
	// 40+8 tokens are 3 blocks of 16: 4 unshared copies would need 12.
	cfg := engine.Config{NumBlocks: 8}

	one := newEngine(t, m, cfg)
	want := run(t, one, engine.Request{Prompt: prompt, Params: greedy})
	if got := one.Stats().ComputedTokens; got != int64(len(prompt)+maxTokens-1) {
		t.Fatalf("n = 1 computed %d tokens", got)
	}

	e := newEngine(t, m, cfg)
	ch, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: greedy, N: 4})
	if err != nil {
		t.Fatal(err)
	}
	rs := collectN(t, ch, 4)
	for i, r := range rs {
		if !slices.Equal(r.tokens, want.tokens) || !slices.Equal(r.logprobs, want.logprobs) || r.final.Reason != engine.Length {
			t.Errorf("greedy completion %d: %v (%s), n = 1 gave %v", i, r.tokens, r.final.Reason, want.tokens)
		}
		if u := r.final.Usage; u.PromptTokens != len(prompt) || u.CompletionTokens != maxTokens {
			t.Errorf("completion %d usage %+v", i, u)
		}
	}
	// The prompt is computed once; each further completion finds its 2
	// whole blocks in the prefix cache and copies the first 7 tokens of
	// the first completion's partial block (kvcache's partial blocks), so
	// it computes the prompt's last token only (its logits). Before
	// partial blocks were cached each computed the partial block's 8
	// tokens: 92 tokens in all, 3 x 32 hits.
	st := e.Stats()
	if want := int64(len(prompt) + 3*1 + 4*(maxTokens-1)); st.ComputedTokens != want || st.Preemptions != 0 {
		t.Errorf("n = 4: %d tokens computed, %d preemptions; want %d (the prompt once, then its last token for each other completion) and 0", st.ComputedTokens, st.Preemptions, want)
	}
	if st.KV.PrefixHits != 3*39 {
		t.Errorf("n = 4: %d prompt tokens from the prefix cache; want 3 x 39", st.KV.PrefixHits)
	}
	if st.Finished != 4 || st.KV.Sequences != 0 || st.Running != 0 {
		t.Errorf("after n = 4: %+v", st)
	}

	// Seeded sampling: completion i is the n = 1 run with seed 7+i.
	seed := uint64(7)
	sampled := sample.Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1, MaxTokens: 12, Seed: &seed}
	big := newEngine(t, m, engine.Config{NumBlocks: 64})
	ch, err = big.Submit(context.Background(), engine.Request{Prompt: prompt, Params: sampled, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	rs = collectN(t, ch, 3)
	for i, r := range rs {
		s := seed + uint64(i)
		p := sampled
		p.Seed = &s
		alone := run(t, big, engine.Request{Prompt: prompt, Params: p})
		if !slices.Equal(r.tokens, alone.tokens) {
			t.Errorf("seeded completion %d: %v, alone with seed %d: %v", i, r.tokens, s, alone.tokens)
		}
	}
	if slices.Equal(rs[0].tokens, rs[1].tokens) && slices.Equal(rs[1].tokens, rs[2].tokens) {
		t.Errorf("three sampled completions are identical: %v", rs[0].tokens)
	}

	// Cancelling ends every completion.
	ctx, cancel := context.WithCancel(context.Background())
	ch, err = big.Submit(ctx, engine.Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1}, N: 2})
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel()
	for ev := range ch {
		if ev.Done && ev.Reason != engine.Abort {
			t.Errorf("cancelled completion %d: %+v", ev.Index, ev)
		}
	}
	if st := big.Stats(); st.KV.Sequences != 0 {
		t.Errorf("after the cancel: %+v", st)
	}

	if _, err := big.Submit(context.Background(), engine.Request{Prompt: prompt, Params: greedy, N: 65}); err == nil {
		t.Error("n = 65 > MaxSeqs was accepted")
	}
}

// TestNEndsHeldCompletions: the completions after the first wait until it
// has sampled; a request that ends before that (refused at admission,
// cancelled while queued) still gives every completion its final event,
// and leaves nothing in the pool.
func TestNEndsHeldCompletions(t *testing.T) {
	sm := &scripted.Model{VocabSize: 16, Ctx: 64, BlockSize: 4, Next: hashLogits}
	e, err := engine.NewBackend(sm, engine.Config{NumBlocks: 32, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 4}
	// The scripted backend has no hidden states: the first completion's
	// admission fails.
	ch, err := e.Submit(context.Background(), engine.Request{Prompt: []int32{1, 2, 3}, Params: p, N: 3, PromptLogits: 1, PromptHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range collectN(t, ch, 3) {
		if len(r.tokens) != 0 || r.final.Reason != engine.Abort || r.final.Err == nil {
			t.Errorf("refused, completion %d: %d tokens, final %+v", i, len(r.tokens), r.final)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ch, err = e.Submit(ctx, engine.Request{Prompt: []int32{1, 2, 3}, Params: p, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range collectN(t, ch, 3) {
		if len(r.tokens) != 0 || r.final.Reason != engine.Abort {
			t.Errorf("cancelled, completion %d: %d tokens, final %+v", i, len(r.tokens), r.final)
		}
	}
	// The completions' final events can reach the caller before the loop
	// has retired the cancelled request's admitted completion: wait for
	// the counters to settle (as TestSlowReader waits for Aborted).
	st := e.Stats()
	for deadline := time.Now().Add(5 * time.Second); (st.Aborted != 6 || st.Waiting != 0 || st.Running != 0) && time.Now().Before(deadline); st = e.Stats() {
		time.Sleep(time.Millisecond)
	}
	if st.KV.Sequences != 0 || st.Running != 0 || st.Waiting != 0 || st.Aborted != 6 {
		t.Errorf("after both: %+v", st)
	}
}

// TestIgnoreEOS biases the end-of-sequence token to certainty: the request
// stops at once, unless it ignores EOS, when it runs to MaxTokens.
func TestIgnoreEOS(t *testing.T) {
	m, tok := tiny(t)
	e := newEngine(t, m, engine.Config{NumBlocks: 64, Tokenizer: tok})
	eos := tok.Vocab().EOS
	p := sample.Params{Temperature: 0, TopP: 1, RepetitionPenalty: 1, MaxTokens: 7, LogitBias: map[int32]float32{eos: 100}}
	r := run(t, e, engine.Request{Text: "hello", Params: p})
	if len(r.tokens) != 1 || r.tokens[0] != eos || r.final.Reason != engine.Stop {
		t.Fatalf("without IgnoreEOS: tokens %v, reason %s; want one EOS and stop", r.tokens, r.final.Reason)
	}
	r = run(t, e, engine.Request{Text: "hello", Params: p, IgnoreEOS: true})
	if len(r.tokens) != 7 || r.final.Reason != engine.Length {
		t.Fatalf("with IgnoreEOS: %d tokens, reason %s; want 7 and length", len(r.tokens), r.final.Reason)
	}
}

// TestPromptLogits: the first token event carries the raw logit rows of
// the prompt's last positions, bit-identical to one forward of the whole
// prompt, computed in chunks and even when the prefix cache holds the
// prompt (those positions are recomputed, the earlier ones still hit:
// whole blocks, and the first slots of the last request's partial block).
func TestPromptLogits(t *testing.T) {
	m, _ := tiny(t)
	prompt := make([]int32, 50)
	for i := range prompt {
		prompt[i] = int32(i*41%310 + 2)
	}
	vocab := m.Config.Vocab
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: 4, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	b := model.Batch{Tokens: prompt, SeqStarts: []int32{0, 50}, BlockTables: [][]int32{{0, 1, 2, 3}}, ContextLens: []int32{50}}
	for i := range prompt {
		b.Positions = append(b.Positions, int32(i))
		b.LogitRows = append(b.LogitRows, int32(i))
	}
	all, err := m.Forward(&b, kv)
	if err != nil {
		t.Fatal(err)
	}
	all = slices.Clone(all)

	e := newEngine(t, m, engine.Config{NumBlocks: 16, MaxBatchedTokens: 16})
	for _, tc := range []struct{ rows, cached int }{{50, 0}, {1, 49}, {20, 16}, {50, 0}} {
		ch, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 2}, PromptLogits: tc.rows})
		if err != nil {
			t.Fatal(err)
		}
		var got []float32
		var final engine.Event
		for ev := range ch {
			if ev.PromptLogits != nil {
				if got != nil {
					t.Fatal("prompt logits in two events")
				}
				got = ev.PromptLogits
			}
			if ev.Done {
				final = ev
			}
		}
		if want := all[(50-tc.rows)*vocab:]; !slices.Equal(got, want) {
			t.Errorf("%d rows: %d logits differ from a whole-prompt forward's", tc.rows, len(got))
		}
		if u := final.Usage; u.CachedPromptTokens != tc.cached || u.ComputedPromptTokens != 50-tc.cached {
			t.Errorf("%d rows: usage %+v; want %d cached", tc.rows, u, tc.cached)
		}
	}
	if _, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: sample.Defaults(), PromptLogits: 51}); err == nil {
		t.Error("51 rows of a 50-token prompt were accepted")
	}
}

// TestCancelIsExact: a context cancelled during a step (here, from inside
// the forward of a scripted model) gets no token event after that step's
// forward, and the request runs no further step: cancelled during the
// 4th forward, it has the 3 tokens of the first three; cancelled during a
// prompt's first 16-token chunk, it computed that chunk alone.
func TestCancelIsExact(t *testing.T) {
	for _, tc := range []struct {
		prompt, at, tokens, computed int
	}{{3, 4, 3, 3}, {40, 1, 0, 16}} {
		ctx, cancel := context.WithCancel(context.Background())
		forwards := 0
		sm := &scripted.Model{VocabSize: 8, Ctx: 256, BlockSize: 4,
			Next: func(h []int32, row []float32) { row[len(h)%8] = 1 },
			OnForward: func(*model.Batch) {
				if forwards++; forwards == tc.at {
					cancel()
				}
			}}
		e, err := engine.NewBackend(sm, engine.Config{NumBlocks: 32, BlockSize: 4, MaxBatchedTokens: 16})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := e.Submit(ctx, engine.Request{Prompt: make([]int32, tc.prompt), Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 50}})
		if err != nil {
			t.Fatal(err)
		}
		r := collect(ch, nil)
		if len(r.tokens) != tc.tokens || r.final.Reason != engine.Abort || !errors.Is(r.final.Err, context.Canceled) || r.final.Usage.ComputedPromptTokens != tc.computed {
			t.Errorf("cancelled in forward %d: %d tokens, final %+v; want %d tokens, %d prompt tokens computed, aborted", tc.at, len(r.tokens), r.final, tc.tokens, tc.computed)
		}
		if st := e.Stats(); st.Steps != int64(tc.at) || st.KV.Sequences != 0 {
			t.Errorf("cancelled in forward %d: %+v", tc.at, st)
		}
		e.Close()
	}
}

// staggered submits reqs in order, each once the previous one has its
// first token (so each arrives at a later step, joining a running batch),
// and returns their results once all are done.
func staggered(t *testing.T, e *engine.Engine, reqs []engine.Request) []*result {
	t.Helper()
	together := make([]*result, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		ch, err := e.Submit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		first := make(chan struct{})
		wg.Go(func() { together[i] = collect(ch, first) })
		<-first
	}
	wg.Wait()
	return together
}
