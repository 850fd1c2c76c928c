package runner

import (
	"fmt"
	"time"

	"kiln/model"
	"kiln/sample"
	"kiln/sched"
)

// Runner runs scheduler plans on a model over one KV store.
type Runner struct {
	m  *model.Model
	kv *model.KVStore

	seqs  map[string]*seq
	batch model.Batch
	out   Output
	rows  []int32 // [len(plan.Seqs)] index into the logits (LogitRows) of each sequence, -1 where none
}

// seq is one request's sampling state.
type seq struct {
	sampler *sample.Sampler
	history []int32 // prompt, then every sampled token: the penalties' window
}

// Output is one step's result, aligned with plan.Seqs and then
// plan.Forks (sched.Update's sampled). Its slices are reused by the next
// Run.
type Output struct {
	// Tokens[i] is the token sampled for plan.Seqs[i], or -1 where the
	// sequence did not sample (a prompt chunk short of its end): what
	// sched.Update takes. Tokens[len(plan.Seqs)+j] is plan.Forks[j]'s,
	// sampled from its parent's row.
	Tokens []int32
	// Samples[i] is the full sample (log-probabilities when asked for) of
	// Tokens[i]; its Top is the sampler's scratch, valid until the next Run.
	Samples []sample.Token
	// Forward and Sample are the step's wall time in model.Forward and in
	// the samplers: the rest of a step is the engine's overhead.
	Forward, Sample time.Duration
}

// New returns a runner of m over kv.
func New(m *model.Model, kv *model.KVStore) *Runner {
	return &Runner{m: m, kv: kv, seqs: map[string]*seq{}}
}

// Add registers request id with its prompt and its sampler (built by the
// caller, off the loop, with sample.New against this model's vocabulary).
// The sampler lives until Remove, across preemptions.
func (r *Runner) Add(id string, prompt []int32, s *sample.Sampler) error {
	if r.seqs[id] != nil {
		return fmt.Errorf("runner: request %q is already added", id)
	}
	h := make([]int32, len(prompt), len(prompt)+min(max(s.Params().MaxTokens, 16), 4096))
	copy(h, prompt)
	r.seqs[id] = &seq{sampler: s, history: h}
	return nil
}

// Vocab is the length of the model's logit rows: what sample.New takes.
func (r *Runner) Vocab() int { return r.m.Config.Vocab }

// Remove forgets request id (finished or aborted).
func (r *Runner) Remove(id string) { delete(r.seqs, id) }

// Len is the number of requests added and not removed.
func (r *Runner) Len() int { return len(r.seqs) }

// Run applies plan.Copies to the KV store, runs one forward over
// plan.Seqs and samples the sequences marked Sample, then each of
// plan.Forks from its parent's row with its own sampler. Every sequence
// and fork of the plan must have been added. An empty plan does nothing.
func (r *Runner) Run(plan *sched.Plan) (Output, error) {
	n := len(plan.Seqs) + len(plan.Forks)
	r.out.Tokens = grow(r.out.Tokens, n)
	r.out.Samples = growSamples(r.out.Samples, n)
	if n == 0 {
		return r.out, nil
	}
	for _, c := range plan.Copies {
		if err := r.kv.CopyBlock(int(c.Src), int(c.Dst)); err != nil {
			return Output{}, fmt.Errorf("runner: step %d: %w", plan.Step, err)
		}
	}
	if err := r.build(plan); err != nil {
		return Output{}, err
	}
	t0 := time.Now()
	logits, err := r.m.Forward(&r.batch, r.kv)
	if err != nil {
		return Output{}, fmt.Errorf("runner: step %d: %w", plan.Step, err)
	}
	t1 := time.Now()
	r.out.Forward = t1.Sub(t0)
	vocab := r.m.Config.Vocab
	k := 0 // index into LogitRows
	for i, q := range plan.Seqs {
		r.out.Tokens[i], r.out.Samples[i] = -1, sample.Token{ID: -1}
		if r.rows[i] < 0 {
			continue
		}
		if err := r.sample(plan, i, q.ID, logits[k*vocab:(k+1)*vocab]); err != nil {
			return Output{}, err
		}
		k++
	}
	for j, f := range plan.Forks {
		i := len(plan.Seqs) + j
		r.out.Tokens[i], r.out.Samples[i] = -1, sample.Token{ID: -1}
		k := r.rows[f.Seq]
		if k < 0 {
			return Output{}, fmt.Errorf("runner: step %d forks %q from a sequence that does not sample", plan.Step, f.ID)
		}
		if err := r.sample(plan, i, f.ID, logits[int(k)*vocab:(int(k)+1)*vocab]); err != nil {
			return Output{}, err
		}
	}
	r.out.Sample = time.Since(t1)
	return r.out, nil
}

// sample draws output i of the step for request id from its logit row.
func (r *Runner) sample(plan *sched.Plan, i int, id string, row []float32) error {
	s := r.seqs[id]
	if s == nil {
		return fmt.Errorf("runner: step %d names request %q, which was not added", plan.Step, id)
	}
	tok, err := s.sampler.Sample(row, s.history)
	if err != nil {
		return fmt.Errorf("runner: step %d, request %q: %w", plan.Step, id, err)
	}
	s.history = append(s.history, tok.ID)
	r.out.Tokens[i], r.out.Samples[i] = tok.ID, tok
	return nil
}

// build lays plan.Seqs out in r.batch (see the package comment).
func (r *Runner) build(plan *sched.Plan) error {
	b := &r.batch
	b.Tokens, b.Positions = b.Tokens[:0], b.Positions[:0]
	b.SeqStarts = append(b.SeqStarts[:0], 0)
	b.BlockTables, b.ContextLens, b.LogitRows = b.BlockTables[:0], b.ContextLens[:0], b.LogitRows[:0]
	r.rows = r.rows[:0]
	for _, q := range plan.Seqs {
		if r.seqs[q.ID] == nil {
			return fmt.Errorf("runner: step %d names request %q, which was not added", plan.Step, q.ID)
		}
		if len(q.Tokens) == 0 {
			return fmt.Errorf("runner: step %d gives request %q no tokens", plan.Step, q.ID)
		}
		for j, t := range q.Tokens {
			b.Tokens = append(b.Tokens, t)
			b.Positions = append(b.Positions, int32(q.Start+j))
		}
		end := int32(len(b.Tokens))
		b.SeqStarts = append(b.SeqStarts, end)
		b.BlockTables = append(b.BlockTables, q.Table)
		b.ContextLens = append(b.ContextLens, int32(q.Start+len(q.Tokens)))
		k := int32(-1)
		if q.Sample {
			k = int32(len(b.LogitRows))
			b.LogitRows = append(b.LogitRows, end-1)
		}
		r.rows = append(r.rows, k)
	}
	return nil
}

func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growSamples(s []sample.Token, n int) []sample.Token {
	if cap(s) < n {
		return make([]sample.Token, n)
	}
	return s[:n]
}
