package engine_test

import (
	"testing"

	"kiln/engine"
	"kiln/internal/testutil/tinymodel"
	"kiln/model"
	"kiln/synth"
)

// moeSpecs are small random-weight mixtures of experts of the four
// architectures kiln runs (issue 22): tinymodel's shape with 8 experts, 2
// per token, so requests in one step route to different experts.
func moeSpecs() map[string]synth.Spec {
	base := tinymodel.Spec
	base.Experts, base.ExpertsUsed = 8, 2
	q3 := base
	q3.Arch, q3.HeadDim, q3.ExpertFFN = "qwen3moe", 16, 32
	q2 := base
	q2.Arch, q2.ExpertFFN, q2.SharedFFN = "qwen2moe", 32, 64
	mixtral := base // llama with experts: Mixtral
	ol := base
	ol.Arch, ol.KVHeads, ol.ExpertFFN = "olmoe", ol.Heads, 32
	return map[string]synth.Spec{"qwen3moe": q3, "qwen2moe": q2, "mixtral": mixtral, "olmoe": ol}
}

// tinyMoE loads spec's model with Q8_0 weights.
func tinyMoE(t testing.TB, spec synth.Spec) *model.Model {
	t.Helper()
	_, m := tinymodel.Model(t, spec, "Q8_0", 5, model.Options{})
	if !m.Config.MoE() {
		t.Fatalf("%s: loaded as a dense model", spec.Arch)
	}
	return m
}

// TestInvarianceMoE: TestInvariance for each mixture-of-experts
// architecture: 16 staggered requests, chunked prompts and preemption give
// every request the tokens and logprobs it gets alone, though the rows of
// a step are grouped by expert (MulMatID) with other requests' rows.
func TestInvarianceMoE(t *testing.T) {
	for name, spec := range moeSpecs() {
		if raceDetector && name != "qwen3moe" {
			continue // ~25 s each under -race; the grouped expert path is the same
		}
		t.Run(name, func(t *testing.T) { testInvariance(t, tinyMoE(t, spec), model.KVF16) })
	}
}

// TestPrefixHitMoE: a prefix-cache hit on a mixture of experts gives the
// cold run's bits.
func TestPrefixHitMoE(t *testing.T) {
	specs := moeSpecs()
	for _, name := range []string{"qwen3moe", "qwen2moe"} {
		t.Run(name, func(t *testing.T) { testPrefixHit(t, tinyMoE(t, specs[name]), model.KVF16) })
	}
}

// TestSpecMoE: speculative decoding on a mixture-of-experts target, with
// n-gram drafts and with a dense draft model of the same vocabulary, among
// staggered requests under preemption, gives each request's tokens and
// logprobs alone without speculation (verification rows of several
// drafts are grouped by expert like prompt rows).
func TestSpecMoE(t *testing.T) {
	m := tinyMoE(t, moeSpecs()["qwen3moe"])
	dense := tinymodel.Spec
	dense.Layers = 1
	_, dm := tinymodel.Model(t, dense, "Q8_0", 5, model.Options{})
	reqs := mixed()[:10]
	for i := range reqs {
		if i%3 == 1 {
			reqs[i].Prompt = repetitive(len(reqs[i].Prompt))
		}
	}
	alone := make([]*result, len(reqs))
	for i, req := range reqs {
		alone[i] = run(t, newEngine(t, m, engine.Config{NumBlocks: 64}), req)
	}
	for _, sp := range []engine.Speculation{
		{Method: "ngram", Tokens: 4, MaxSeqs: 64},
		{Method: "draft", Tokens: 3, MaxSeqs: 64, Draft: dm},
	} {
		e := newEngine(t, m, engine.Config{NumBlocks: 48, MaxBatchedTokens: 64, MaxSeqs: 16, Spec: sp})
		together := staggered(t, e, reqs)
		st := e.Stats()
		t.Logf("%s: %d preemptions, %d drafts, %d accepted", sp.Method, st.Preemptions, st.SpecDrafts, st.SpecAcceptedTokens)
		if st.SpecDrafts == 0 || st.Preemptions == 0 {
			t.Errorf("%s: want drafts and preemptions (%+v)", sp.Method, st)
		}
		if sp.Method == "ngram" && st.SpecAcceptedTokens == 0 {
			t.Errorf("ngram: no draft token accepted (%+v)", st)
		}
		for i := range reqs {
			sameResult(t, sp.Method+" request "+string(rune('a'+i)), alone[i], together[i])
		}
		if st.KV.Sequences != 0 || st.KV.Free != st.KV.Blocks {
			t.Errorf("%s: blocks held after every request ended: %+v", sp.Method, st.KV)
		}
	}
}
