package runner_test

import (
	"fmt"
	"slices"
	"testing"

	"kiln/internal/testutil/tinymodel"
	"kiln/kvcache"
	"kiln/model"
	"kiln/runner"
	"kiln/sample"
	"kiln/sched"
)

// tinyModel writes and loads a small random-weight model: big enough for
// GQA, chunked prefill and paging to matter, small enough for -race.
func tinyModel(t testing.TB) *model.Model {
	t.Helper()
	_, m := tinymodel.Model(t, tinymodel.Spec, "Q8_0", 11, model.Options{})
	return m
}

type job struct {
	id     string
	prompt []int32
	params sample.Params
	arrive int // step before which it is added
}

func add(t *testing.T, r *runner.Runner, j job) {
	t.Helper()
	s, err := sample.New(j.params, r.Vocab())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(j.id, j.prompt, s); err != nil {
		t.Fatal(err)
	}
}

type result struct {
	tokens   []int32
	logprobs []float32
}

// drive runs jobs to completion through sched and the runner, as the
// engine loop does, adding each job before step job.arrive. It returns the
// results and the number of preemptions.
func drive(t *testing.T, m *model.Model, jobs []job, numBlocks, maxBatched int) (map[string]*result, int, kvcache.Stats) {
	t.Helper()
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: numBlocks, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := kvcache.New(numBlocks, 16)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sched.New(sched.Config{MaxBatchedTokens: maxBatched, MaxSeqs: 16, MaxModelLen: 1024}, pool)
	if err != nil {
		t.Fatal(err)
	}
	r := runner.New(m, kv)
	res := map[string]*result{}
	preempted := 0
	pending := slices.Clone(jobs)
	for step := 0; ; step++ {
		for len(pending) > 0 && pending[0].arrive <= step {
			j := pending[0]
			pending = pending[1:]
			add(t, r, j)
			if err := s.Add(sched.Request{ID: j.id, Prompt: j.prompt, MaxTokens: j.params.MaxTokens}); err != nil {
				t.Fatal(err)
			}
			res[j.id] = &result{}
		}
		if s.Done() {
			if len(pending) == 0 {
				break
			}
			continue
		}
		plan := s.Schedule()
		preempted += len(plan.Preempted)
		out, err := r.Run(&plan)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range plan.Seqs {
			if out.Tokens[i] >= 0 {
				res[q.ID].tokens = append(res[q.ID].tokens, out.Tokens[i])
				res[q.ID].logprobs = append(res[q.ID].logprobs, out.Samples[i].Logprob)
			}
		}
		events, err := s.Update(plan, out.Tokens)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if ev.Done {
				r.Remove(ev.ID)
			}
		}
		if err := pool.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if r.Len() != 0 {
		t.Fatalf("%d requests left in the runner", r.Len())
	}
	return res, preempted, pool.Stats()
}

// mixedJobs are 16 requests of prompt lengths 3..~200, budgets 16, 64 and
// 512, greedy with logprobs, one of them seeded and sampled, arriving at
// staggered steps.
func mixedJobs() []job {
	var jobs []job
	budgets := []int{16, 64, 512}
	for i := 0; i < 16; i++ {
		n := 3 + (i*37)%190
		prompt := make([]int32, n)
		for k := range prompt {
			prompt[k] = int32((i*131 + k*17 + k*k) % 320)
		}
		p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: budgets[i%3], Logprobs: true}
		if i == 5 {
			seed := uint64(42)
			p.Temperature, p.TopK, p.TopP, p.MinP, p.Seed = 0.9, 40, 0.95, 0.02, &seed
			p.RepetitionPenalty, p.FrequencyPenalty = 1.1, 0.2
		}
		jobs = append(jobs, job{id: fmt.Sprintf("r%02d", i), prompt: prompt, params: p, arrive: i * 3})
	}
	return jobs
}

// TestInvariance: every request's tokens and logprobs are the same bits
// whether it runs alone in a roomy pool or among 15 others arriving at
// staggered steps in a pool small enough to preempt, with prompts chunked.
func TestInvariance(t *testing.T) {
	m := tinyModel(t)
	jobs := mixedJobs()
	together, preempted, _ := drive(t, m, jobs, 48, 64)
	if preempted == 0 {
		t.Fatal("the small pool preempted nothing: the test does not exercise preemption")
	}
	t.Logf("%d preemptions", preempted)
	for _, j := range jobs {
		j.arrive = 0
		alone, _, _ := drive(t, m, []job{j}, 64, 512)
		a, b := alone[j.id], together[j.id]
		if len(a.tokens) != j.params.MaxTokens {
			t.Errorf("%s alone: %d tokens, want %d", j.id, len(a.tokens), j.params.MaxTokens)
		}
		if !slices.Equal(a.tokens, b.tokens) {
			t.Errorf("%s: tokens alone %v\n together %v", j.id, a.tokens, b.tokens)
		}
		if !slices.Equal(a.logprobs, b.logprobs) {
			t.Errorf("%s: logprobs differ alone and together", j.id)
		}
	}
}

// TestPrefixHit: a request whose prompt is in the prefix cache (a first
// request with the same prompt ran and finished) gets the same tokens and
// logprobs, bit for bit, as on a cold cache.
func TestPrefixHit(t *testing.T) {
	m := tinyModel(t)
	prompt := make([]int32, 70)
	for i := range prompt {
		prompt[i] = int32(i*7%300 + 1)
	}
	p := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 20, Logprobs: true}
	cold, _, _ := drive(t, m, []job{{id: "a", prompt: prompt, params: p}}, 32, 512)
	warm, _, st := drive(t, m, []job{{id: "a", prompt: prompt, params: p}, {id: "b", prompt: prompt, params: p, arrive: 1000}}, 32, 512)
	// b's prompt is 70 tokens: its first 4 blocks (64 tokens) come from a's.
	if st.PrefixHits < 64 {
		t.Fatalf("prefix hits %d tokens, want >= 64 (stats %+v)", st.PrefixHits, st)
	}
	if !slices.Equal(cold["a"].tokens, warm["b"].tokens) || !slices.Equal(cold["a"].logprobs, warm["b"].logprobs) {
		t.Fatalf("prefix hit differs from cold run:\n cold %v\n warm %v", cold["a"].tokens, warm["b"].tokens)
	}
}

// TestDecodeAllocs: a steady-state decode step (16 sequences, one token
// each) allocates nothing in the runner, the forward or the samplers.
func TestDecodeAllocs(t *testing.T) {
	m := tinyModel(t)
	jobs := mixedJobs()
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: 64, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	r := runner.New(m, kv)
	plan := sched.Plan{Step: 1}
	for i, j := range jobs {
		j.params.MaxTokens = 4096 // history capacity: 21+ appends do not grow it
		add(t, r, j)
		plan.Seqs = append(plan.Seqs, sched.Seq{ID: j.id, Start: 20, Tokens: []int32{int32(i)}, Table: []int32{int32(2 * i), int32(2*i + 1)}, Sample: true})
	}
	if _, err := r.Run(&plan); err != nil {
		t.Fatal(err)
	}
	got := testing.AllocsPerRun(20, func() {
		if _, err := r.Run(&plan); err != nil {
			t.Fatal(err)
		}
	})
	if got != 0 {
		t.Errorf("a decode step allocates %v times, want 0", got)
	}
}
