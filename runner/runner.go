package runner

import (
	"fmt"
	"slices"
	"time"

	"kiln/model"
	"kiln/sample"
	"kiln/sched"
)

// Runner runs scheduler plans on a Backend (a model over one KV store).
type Runner struct {
	b   Backend
	now func() time.Time // the clock of Output.Forward and Output.Sample

	reqs  map[string]*request
	batch model.Batch
	out   Output
	rows  []int32 // [len(plan.Seqs)] index into the logits (LogitRows) of each sequence's sample row, -1 where none
	keeps []keep  // prompt rows to copy out of this step's logits
}

// request is one request's sampling state (its tokens and KV are the
// scheduler's; the plan's sched.Seq is its part of one step).
type request struct {
	sampler *sample.Sampler
	history []int32 // prompt, then every sampled token: the penalties' window

	// Prompt logits (KeepPromptLogits): the raw rows of the last tail
	// prompt positions, [tail][Vocab], filled as the prompt's chunks run;
	// ready once the prompt's last row is in.
	prompt, tail int
	logits       []float32
	hidden       bool // the rows kept are final-norm hidden rows, [tail][Dim] (KeepPromptHidden)
	ready, taken bool
}

// keep is one sequence's run of prompt rows in a step's logits: rows
// [row, row+n) are positions [pos, pos+n) of s.
type keep struct {
	s        *request
	row, pos int
	n        int
	last     bool // the run ends at the prompt's last position
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
	// Accepted[i] is how many drafted tokens of plan.Seqs[i] (Seq.Draft)
	// were accepted, 0 where none were drafted: sched.UpdateDrafts takes
	// it. Their samples are Drafts(i); Tokens[i] is the sample after them
	// (the first that differed from the draft, or the bonus token).
	Accepted []int32
	drafts   []sample.Token // accepted drafts' samples, each sequence's in turn
	draftAt  []int32        // [len(plan.Seqs)+1] offsets into drafts
	// Forward and Sample are the step's wall time in model.Forward and in
	// the samplers: the rest of a step is the engine's overhead.
	Forward, Sample time.Duration
}

// Drafts returns the samples of plan.Seqs[i]'s accepted drafted tokens
// (Accepted[i] of them, logprobs included when asked for; their Top is
// the runner's, valid until the next Run).
func (o *Output) Drafts(i int) []sample.Token {
	if i+1 >= len(o.draftAt) {
		return nil
	}
	return o.drafts[o.draftAt[i]:o.draftAt[i+1]]
}

// New returns a runner of m over kv.
func New(m *model.Model, kv *model.KVStore) *Runner {
	return NewBackend(modelBackend{m, kv})
}

// NewBackend returns a runner of any Backend.
func NewBackend(b Backend) *Runner {
	return &Runner{b: b, now: time.Now, reqs: map[string]*request{}}
}

// SetClock replaces time.Now as the clock that times forwards and
// sampling (the engine's injected clock).
func (r *Runner) SetClock(now func() time.Time) { r.now = now }

// Add registers request id with its prompt and its sampler (built by the
// caller, off the loop, with sample.New against this model's vocabulary).
// The sampler lives until Remove, across preemptions.
func (r *Runner) Add(id string, prompt []int32, s *sample.Sampler) error {
	if r.reqs[id] != nil {
		return fmt.Errorf("runner: request %q is already added", id)
	}
	h := make([]int32, len(prompt), len(prompt)+min(max(s.Params().MaxTokens, 16), 4096))
	copy(h, prompt)
	r.reqs[id] = &request{sampler: s, history: h}
	return nil
}

// Vocab is the length of the model's logit rows: what sample.New takes.
func (r *Runner) Vocab() int { return r.b.Vocab() }

// Context is the most positions one sequence may hold in the model.
func (r *Runner) Context() int { return r.b.Context() }

// KeepPromptLogits asks that the raw logit rows of the last n prompt
// positions of request id (1 <= n <= its prompt's length) be kept as they
// are computed, for TakePromptLogits. The scheduler must compute those
// positions (sched.Request.ComputeTail): rows served from the prefix cache
// would be missing.
func (r *Runner) KeepPromptLogits(id string, n int) error {
	return r.keepPrompt(id, n, r.b.Vocab(), false)
}

// keepPrompt asks for rows of width values (a logit or a hidden row) of
// the last n prompt positions of request id.
func (r *Runner) keepPrompt(id string, n, width int, hidden bool) error {
	s := r.reqs[id]
	switch {
	case s == nil:
		return fmt.Errorf("runner: request %q was not added", id)
	case n < 1 || n > len(s.history):
		return fmt.Errorf("runner: request %q: %d prompt logit rows of a %d-token prompt", id, n, len(s.history))
	}
	s.prompt, s.tail, s.hidden = len(s.history), n, hidden
	s.logits = make([]float32, n*width)
	return nil
}

// KeepPromptHidden is KeepPromptLogits for the final-norm hidden rows,
// [n][Dim], instead of the logits (embeddings); TakePromptLogits hands
// them over. The backend must be a HiddenBackend.
func (r *Runner) KeepPromptHidden(id string, n int) error {
	hb, ok := r.b.(HiddenBackend)
	if !ok {
		return fmt.Errorf("runner: the backend does not return hidden states")
	}
	return r.keepPrompt(id, n, hb.Dim(), true)
}

// TakePromptLogits returns request id's kept prompt rows, [n][Vocab] raw
// logits of its last n prompt positions, once the step that samples its
// first token has run; nil before that, after a first take, or when none
// were asked for. The slice is the caller's.
func (r *Runner) TakePromptLogits(id string) []float32 {
	s := r.reqs[id]
	if s == nil || !s.ready || s.taken {
		return nil
	}
	s.taken = true
	out := s.logits
	s.logits = nil
	return out
}

// Remove forgets request id (finished or aborted).
func (r *Runner) Remove(id string) { delete(r.reqs, id) }

// Len is the number of requests added and not removed.
func (r *Runner) Len() int { return len(r.reqs) }

// Run applies plan.Copies to the KV store, runs one forward over
// plan.Seqs and samples the sequences marked Sample, then each of
// plan.Forks from its parent's row with its own sampler. Every sequence
// and fork of the plan must have been added. An empty plan does nothing.
func (r *Runner) Run(plan *sched.Plan) (Output, error) {
	n := len(plan.Seqs) + len(plan.Forks)
	r.out.Tokens = grow(r.out.Tokens, n)
	r.out.Samples = growSamples(r.out.Samples, n)
	r.out.Accepted = grow(r.out.Accepted, len(plan.Seqs))
	r.out.drafts = r.out.drafts[:0]
	r.out.draftAt = append(r.out.draftAt[:0], 0)
	if n == 0 {
		return r.out, nil
	}
	for _, c := range plan.Copies {
		if err := r.b.CopyBlock(int(c.Src), int(c.Dst)); err != nil {
			return Output{}, fmt.Errorf("runner: step %d: %w", plan.Step, err)
		}
	}
	if err := r.build(plan); err != nil {
		return Output{}, err
	}
	t0 := r.now()
	logits, err := r.b.Forward(&r.batch)
	if err != nil {
		return Output{}, fmt.Errorf("runner: step %d: %w", plan.Step, err)
	}
	t1 := r.now()
	r.out.Forward = t1.Sub(t0)
	vocab := r.b.Vocab()
	for _, k := range r.keeps {
		s := k.s
		at := k.pos - (s.prompt - s.tail)
		src, w := logits, vocab
		if s.hidden {
			hb := r.b.(HiddenBackend) // KeepPromptHidden checked
			src, w = hb.Hidden(), hb.Dim()
		}
		copy(s.logits[at*w:(at+k.n)*w], src[k.row*w:(k.row+k.n)*w])
		s.ready = s.ready || k.last
	}
	for i, q := range plan.Seqs {
		r.out.Tokens[i], r.out.Samples[i], r.out.Accepted[i] = -1, sample.Token{ID: -1}, 0
		k := int(r.rows[i])
		if k >= 0 {
			if err := r.verify(plan, i, q, logits[k*vocab:]); err != nil {
				return Output{}, err
			}
		}
		r.out.draftAt = append(r.out.draftAt, int32(len(r.out.drafts)))
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
	r.out.Sample = r.now().Sub(t1)
	return r.out, nil
}

// verify samples plan.Seqs[i] = q from its rows (logits from its first
// sample row on): without a draft, one sample; with one, rows in turn,
// accepting each drafted token while the sample equals it, until the
// first that differs or the bonus row after the last. Each sample is the
// request's own sampler's, in order, exactly as decoding one token per
// step would draw them: with a point-mass draft this is exact rejection
// sampling (accept x with probability p(x), else a draw from p without x),
// and a seeded request draws the same tokens as without speculation.
func (r *Runner) verify(plan *sched.Plan, i int, q sched.Seq, logits []float32) error {
	vocab := r.b.Vocab()
	draft := q.Tokens[len(q.Tokens)-q.Draft:]
	for j := 0; ; j++ {
		if err := r.sample(plan, i, q.ID, logits[j*vocab:(j+1)*vocab]); err != nil {
			return err
		}
		if j == len(draft) || r.out.Tokens[i] != draft[j] {
			return nil
		}
		tok := r.out.Samples[i]
		tok.Top = slices.Clone(tok.Top) // the sampler's scratch is reused by the next row
		r.out.drafts = append(r.out.drafts, tok)
		r.out.Accepted[i]++
	}
}

// sample draws output i of the step for request id from its logit row.
func (r *Runner) sample(plan *sched.Plan, i int, id string, row []float32) error {
	s := r.reqs[id]
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
	r.rows, r.keeps = r.rows[:0], r.keeps[:0]
	for _, q := range plan.Seqs {
		s := r.reqs[q.ID]
		if s == nil {
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
		base := end - int32(len(q.Tokens)) // batch row of position q.Start
		b.SeqStarts = append(b.SeqStarts, end)
		b.BlockTables = append(b.BlockTables, q.Table)
		b.ContextLens = append(b.ContextLens, int32(q.Start+len(q.Tokens)))
		if s.tail > 0 && !s.ready {
			// Prompt rows asked for: every position of this chunk from
			// prompt-tail up to the prompt's end, the sample row included.
			lo, hi := max(q.Start, s.prompt-s.tail), min(q.Start+len(q.Tokens), s.prompt)
			if lo < hi {
				r.keeps = append(r.keeps, keep{s: s, row: len(b.LogitRows), pos: lo, n: hi - lo, last: hi == s.prompt})
				for p := lo; p < hi; p++ {
					b.LogitRows = append(b.LogitRows, base+int32(p-q.Start))
				}
			}
		}
		k := int32(-1)
		if q.Draft > 0 {
			// A speculative step (never a prompt chunk): the rows of the
			// last known token and of each drafted one.
			if q.Draft >= len(q.Tokens) || !q.Sample {
				return fmt.Errorf("runner: step %d: %q drafts %d of its %d tokens", plan.Step, q.ID, q.Draft, len(q.Tokens))
			}
			k = int32(len(b.LogitRows))
			for p := end - 1 - int32(q.Draft); p < end; p++ {
				b.LogitRows = append(b.LogitRows, p)
			}
		} else if q.Sample {
			if n := len(b.LogitRows); n > 0 && b.LogitRows[n-1] == end-1 {
				k = int32(n - 1) // the last prompt row kept is also the sample row
			} else {
				k = int32(n)
				b.LogitRows = append(b.LogitRows, end-1)
			}
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
