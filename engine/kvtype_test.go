package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"kiln/engine"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/sample"
)

// quantKV are the quantized cache types the engine tests run over.
var quantKV = []model.KVType{model.KVQ8_0, model.KVQ4_0}

// tinyKV loads a small random-weight model whose heads (64 wide) a
// quantized cache can hold (tiny's are 16 wide); llama.cpp's Hadamard
// rotation applies to them. layers picks a draft's depth (same seed: it
// shares the embeddings and first layer).
func tinyKV(t testing.TB, layers int) *model.Model {
	t.Helper()
	spec := tinymodel.Spec
	spec.Dim, spec.Heads, spec.KVHeads, spec.HeadDim, spec.Layers = 128, 2, 1, 64, layers
	m, err := model.Load(tinymodel.File(t, spec, "Q8_0", 11), model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestInvarianceQuantKV: TestInvariance (alone vs 16 staggered requests
// under preemption, chunked prompts) with q8_0 and q4_0 caches.
func TestInvarianceQuantKV(t *testing.T) {
	m := tinyKV(t, 2)
	for _, typ := range quantKV {
		t.Run(typ.String(), func(t *testing.T) { testInvariance(t, m, typ) })
	}
}

// TestPrefixHitQuantKV: TestPrefixHit (a prefix-cache hit over quantized
// blocks gives the cold run's bits) with q8_0 and q4_0 caches.
func TestPrefixHitQuantKV(t *testing.T) {
	m := tinyKV(t, 2)
	for _, typ := range quantKV {
		t.Run(typ.String(), func(t *testing.T) { testPrefixHit(t, m, typ) })
	}
}

// TestQuantKVDiffers: a quantized cache really changes the computation (the
// tests above would pass trivially if the type were ignored): q8_0's and
// q4_0's logprobs differ from f16's and from each other.
func TestQuantKVDiffers(t *testing.T) {
	m := tinyKV(t, 2)
	req := engine.Request{Prompt: repetitive(50), Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 8, Logprobs: true}}
	var got [][]float32
	for _, typ := range []model.KVType{model.KVF16, model.KVQ8_0, model.KVQ4_0} {
		got = append(got, run(t, newEngine(t, m, engine.Config{NumBlocks: 16, KVType: typ}), req).logprobs)
	}
	if slices.Equal(got[0], got[1]) || slices.Equal(got[0], got[2]) || slices.Equal(got[1], got[2]) {
		t.Fatalf("logprobs of f16, q8_0 and q4_0 caches are not all different: %v", got)
	}
}

// TestCopyOnWriteQuantKV: n = 4 greedy completions share the prompt's
// quantized blocks (its partial last block copied on write) and each
// equals the n = 1 run, in a pool too small for four unshared copies.
func TestCopyOnWriteQuantKV(t *testing.T) {
	m := tinyKV(t, 2)
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = int32(i*13%300 + 1)
	}
	greedy := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 8, Logprobs: true}
	for _, typ := range quantKV {
		cfg := engine.Config{NumBlocks: 8, KVType: typ} // 40+8 tokens are 3 blocks: 4 copies would need 12
		want := run(t, newEngine(t, m, cfg), engine.Request{Prompt: prompt, Params: greedy})
		e := newEngine(t, m, cfg)
		ch, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: greedy, N: 4})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range collectN(t, ch, 4) {
			if !slices.Equal(r.tokens, want.tokens) || !slices.Equal(r.logprobs, want.logprobs) {
				t.Errorf("%s: completion %d: %v, n = 1 gave %v", typ, i, r.tokens, want.tokens)
			}
		}
		if st := e.Stats(); st.Preemptions != 0 || st.KV.Sequences != 0 {
			t.Errorf("%s: after n = 4: %+v", typ, st)
		}
	}
}

// TestSpecQuantKV: speculative decoding with its rollback over quantized
// caches, n-gram drafts and a draft model (whose own cache is quantized
// too), among 16 staggered requests under preemption, gives each request's
// tokens and logprobs alone without speculation.
func TestSpecQuantKV(t *testing.T) {
	m, dm := tinyKV(t, 2), tinyKV(t, 1)
	reqs := mixed()[:10]
	for i := range reqs {
		if i%3 == 1 {
			reqs[i].Prompt = repetitive(len(reqs[i].Prompt))
		}
	}
	for _, typ := range quantKV {
		alone := make([]*result, len(reqs))
		for i, req := range reqs {
			alone[i] = run(t, newEngine(t, m, engine.Config{NumBlocks: 64, KVType: typ}), req)
		}
		for _, sp := range []engine.Speculation{
			{Method: "ngram", Tokens: 4, MaxSeqs: 64},
			{Method: "draft", Tokens: 3, MaxSeqs: 64, Draft: dm},
		} {
			e := newEngine(t, m, engine.Config{NumBlocks: 48, MaxBatchedTokens: 64, MaxSeqs: 16, KVType: typ, Spec: sp})
			together := staggered(t, e, reqs)
			st := e.Stats()
			t.Logf("%s %s: %d preemptions, %d drafts, %d accepted", typ, sp.Method, st.Preemptions, st.SpecDrafts, st.SpecAcceptedTokens)
			if st.SpecDrafts == 0 || st.SpecAcceptedTokens == 0 || st.Preemptions == 0 {
				t.Errorf("%s %s: want drafts accepted and preemptions (%+v)", typ, sp.Method, st)
			}
			for i := range reqs {
				sameResult(t, typ.String()+" "+sp.Method+" request "+string(rune('a'+i)), alone[i], together[i])
			}
			if st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
				t.Errorf("%s %s: blocks held after every request ended: %+v", typ, sp.Method, st.KV)
			}
		}
	}
}

// TestBeamQuantKV: a beam search (forks copy quantized blocks on write)
// gives the same sequences alone and among 12 other requests in a pool
// small enough to preempt.
func TestBeamQuantKV(t *testing.T) {
	m := tinyKV(t, 2)
	prompt := make([]int32, 37)
	for i := range prompt {
		prompt[i] = int32(i*29%300 + 3)
	}
	req := engine.Request{Prompt: prompt, Params: beamParams(7), BeamWidth: 3, N: 3, LengthPenalty: 1.3}
	for _, typ := range quantKV {
		want := beamRun(t, newEngine(t, m, engine.Config{NumBlocks: 64, KVType: typ}), req)
		e := newEngine(t, m, engine.Config{NumBlocks: 48, MaxBatchedTokens: 64, MaxSeqs: 16, KVType: typ})
		var wg sync.WaitGroup
		for _, other := range mixed()[:12] {
			ch, err := e.Submit(context.Background(), other)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { collect(ch, nil) })
		}
		ch, err := e.Submit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got := beamCollect(t, ch, 3)
		wg.Wait()
		for i := range want {
			if !slices.Equal(got[i].tokens, want[i].tokens) || got[i].cum != want[i].cum {
				t.Errorf("%s sequence %d: among others %v cum %v; alone %v cum %v", typ, i, got[i].tokens, got[i].cum, want[i].tokens, want[i].cum)
			}
		}
		if st := e.Stats(); st.Preemptions == 0 || st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
			t.Errorf("%s: want preemptions and every block back: %+v", typ, st)
		}
	}
}
