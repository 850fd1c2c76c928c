package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"kiln/kvcache"
	"kiln/model"
	"kiln/runner"
	"kiln/sample"
	"kiln/sched"
	"kiln/spec"
	"kiln/tokenizer"
)

// Config sizes an engine. Zero values are the documented defaults, except
// NumBlocks, which is required.
type Config struct {
	NumBlocks        int                  // KV blocks (kvcache.BlocksForBudget sizes it from memory)
	BlockSize        int                  // token slots per block; 0 means 16
	F32KV            bool                 // store the KV in F32 instead of F16 (overrides KVType)
	KVType           model.KVType         // KV element type (and the draft's); the zero value is F16
	NoPrefixCache    bool                 // every prompt is computed whole (kvcache.Pool.DisablePrefixCache)
	MaxBatchedTokens int                  // new tokens per step; 0 means 512
	MaxSeqs          int                  // running requests at most; 0 means 64
	MaxModelLen      int                  // context per request; 0 (or more than the model's) means the model's
	StreamBuffer     int                  // token events a reader may lag behind; 0 means 1024
	Tokenizer        *tokenizer.Tokenizer // optional: Request.Text, Event.Text, end-of-generation ids
	Spec             Speculation          // speculative decoding (spec.go); zero: off
	// Now is the clock of Timings and of the step counters; nil means
	// time.Now. Tests inject a fake one to make timings deterministic.
	Now func() time.Time
	// KVEvents, if set, hears every change of the prefix-cache index
	// (Observe, on the loop goroutine, as the pool makes it) and is
	// flushed once per step: a *kvevents.Publisher sends them to llm-d's
	// router. The caller closes it after Close.
	KVEvents KVEventSink
}

// KVEventSink receives the block manager's prefix-cache events:
// Observe each one as it happens, Flush at the end of each step (the
// step's events form one batch). Both are called on the loop goroutine
// only and must not block it.
type KVEventSink interface {
	Observe(kvcache.Event)
	Flush()
}

func (c *Config) fill(context int) error {
	if c.NumBlocks <= 0 {
		return fmt.Errorf("engine: Config.NumBlocks must be positive (got %d)", c.NumBlocks)
	}
	if c.BlockSize == 0 {
		c.BlockSize = 16
	}
	if c.MaxBatchedTokens == 0 {
		c.MaxBatchedTokens = 512
	}
	if c.MaxSeqs == 0 {
		c.MaxSeqs = 64
	}
	if c.MaxModelLen <= 0 || c.MaxModelLen > context {
		c.MaxModelLen = context
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.StreamBuffer == 0 {
		c.StreamBuffer = 1024
	}
	if err := c.Spec.fill(); err != nil {
		return err
	}
	if c.BlockSize < 0 || c.MaxBatchedTokens < 0 || c.MaxSeqs < 0 || c.StreamBuffer < 0 {
		return fmt.Errorf("engine: negative size in %+v", *c)
	}
	return nil
}

// Engine serves requests on one model. Its methods are safe for
// concurrent use.
type Engine struct {
	cfg Config
	eog []int32 // the tokenizer's end-of-generation ids

	// Owned by the loop goroutine.
	pool       *kvcache.Pool
	sched      *sched.Scheduler
	runner     *runner.Runner
	live       map[string]*stream         // the scheduler's requests, by id
	pending    []*stream                  // queued for the next intake by the layers above the loop (parallel.go, beam.go)
	later      []*stream                  // pending's other buffer
	retired    []string                   // retire's scratch
	spare      []*group                   // the inbox's other buffer
	stalled    bool                       // the last plan was empty: wait for a wake-up
	asks       []sched.DraftAsk           // propose's scratch
	draft      []int32                    // propose's scratch (n-gram)
	drafter    *runner.Drafter            // the draft model (Speculation.Draft); nil for other methods
	wantsDraft func(*sched.DraftAsk) bool // e.wantsAsk (spec.go)
	policy     *spec.Policy               // Speculation.Adaptive's; nil: fixed draft lengths
	ctr        Counters

	mu      sync.Mutex // guards the fields below
	inbox   []*group
	cancels []*group // whose ctx is done
	closed  bool
	nextID  int64
	stats   Stats

	wake chan struct{} // capacity 1: something is in the inbox
	done chan struct{} // closed when the loop has returned
}

// New builds an engine over m (which it then drives: m must not be used
// elsewhere until Close) and starts its loop.
func New(m *model.Model, cfg Config) (*Engine, error) {
	e, err := newEngine(m, cfg)
	if err != nil {
		return nil, err
	}
	go e.run()
	return e, nil
}

// NewBackend builds an engine over any runner.Backend (a scripted model
// in tests) and starts its loop. The backend's KV store must have
// Config.NumBlocks blocks of Config.BlockSize slots (Config.F32KV is the
// backend's business).
func NewBackend(b runner.Backend, cfg Config) (*Engine, error) {
	e, err := build(runner.NewBackend(b), cfg)
	if err != nil {
		return nil, err
	}
	go e.run()
	return e, nil
}

// newEngine builds an engine over a model without starting its loop
// (tests step it).
func newEngine(m *model.Model, cfg Config) (*Engine, error) {
	if err := cfg.fill(m.Config.Context); err != nil {
		return nil, err
	}
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: cfg.NumBlocks, BlockSize: cfg.BlockSize, Type: cfg.kvType()})
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return build(runner.New(m, kv), cfg)
}

// build assembles an engine around its runner, without starting its loop.
func build(r *runner.Runner, cfg Config) (*Engine, error) {
	if err := cfg.fill(r.Context()); err != nil {
		return nil, err
	}
	r.SetClock(cfg.Now)
	pool, err := kvcache.New(cfg.NumBlocks, cfg.BlockSize)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if cfg.NoPrefixCache {
		pool.DisablePrefixCache()
	}
	if cfg.KVEvents != nil {
		pool.SetObserver(cfg.KVEvents.Observe)
	}
	s, err := sched.New(sched.Config{MaxBatchedTokens: cfg.MaxBatchedTokens, MaxSeqs: cfg.MaxSeqs, MaxModelLen: cfg.MaxModelLen}, pool)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e := &Engine{cfg: cfg, pool: pool, sched: s, runner: r, live: map[string]*stream{},
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if cfg.Tokenizer != nil {
		e.eog = cfg.Tokenizer.EOG()
	}
	e.wantsDraft = e.wantsAsk
	if cfg.Spec.Method == "draft" {
		if e.drafter, err = newDrafter(&e.cfg, r.Vocab()); err != nil {
			return nil, err
		}
	}
	if cfg.Spec.Adaptive {
		e.policy = spec.NewPolicy(cfg.Spec.Tokens)
		e.policy.Cost = cfg.Spec.DraftCost
	}
	e.publish()
	return e, nil
}

// Submit queues a request and returns its stream of events (see the
// package comment: the reader must keep up within Config.StreamBuffer
// events or cancel ctx). Cancelling ctx aborts the request within a step.
// Errors in the request itself (an empty or too long prompt, bad
// parameters) are returned here; nothing is queued then.
func (e *Engine) Submit(ctx context.Context, req Request) (<-chan Event, error) {
	prompt := slices.Clone(req.Prompt)
	if len(prompt) == 0 && req.Text != "" {
		if e.cfg.Tokenizer == nil {
			return nil, fmt.Errorf("engine: a text prompt needs Config.Tokenizer")
		}
		prompt = e.cfg.Tokenizer.EncodePrompt(req.Text)
	}
	capacity := e.cfg.NumBlocks * e.cfg.BlockSize
	switch n := len(prompt); {
	case n == 0:
		return nil, refuse("Prompt", "empty prompt")
	case n >= e.cfg.MaxModelLen:
		return nil, refuse("Prompt", "prompt of %d tokens leaves no room in the %d-token context", n, e.cfg.MaxModelLen)
	case n >= capacity:
		return nil, refuse("Prompt", "prompt of %d tokens does not fit the KV cache's %d token slots", n, capacity)
	}
	for _, t := range prompt {
		if t < 0 || int(t) >= e.runner.Vocab() {
			return nil, refuse("Prompt", "prompt token %d outside the vocabulary [0, %d)", t, e.runner.Vocab())
		}
	}
	if len(req.Params.Stop) > 0 && e.cfg.Tokenizer == nil {
		return nil, fmt.Errorf("engine: stop strings need Config.Tokenizer")
	}
	n := max(req.N, 1)
	if req.N < 0 || n > e.cfg.MaxSeqs {
		return nil, refuse("N", "n = %d completions; at most Config.MaxSeqs = %d", req.N, e.cfg.MaxSeqs)
	}
	if req.BeamWidth < 0 {
		return nil, refuse("BeamWidth", "beam width %d", req.BeamWidth)
	}
	if req.PromptLogits < 0 || req.PromptLogits > len(prompt) {
		return nil, refuse("PromptLogits", "logit rows of the last %d positions of a %d-token prompt", req.PromptLogits, len(prompt))
	}
	if req.PromptHidden && req.PromptLogits == 0 {
		return nil, refuse("PromptLogits", "hidden rows (PromptHidden) of no positions")
	}
	stop := slices.Concat(req.Params.StopTokens, e.eog)
	if req.IgnoreEOS && req.Constraint == nil {
		// A constrained request ends where its grammar does: past the
		// end-of-generation token the grammar allows nothing more.
		stop = slices.Clone(req.Params.StopTokens)
	}
	now := e.cfg.Now
	g := &group{
		req:       sched.Request{Prompt: prompt, MaxTokens: req.Params.MaxTokens, Priority: req.Priority, Stop: stop, ComputeTail: req.PromptLogits},
		ctx:       ctx,
		done:      ctx.Done(),
		ch:        make(chan Event, e.cfg.StreamBuffer+n),
		open:      n,
		now:       now,
		submitted: now(),
		logits:    req.PromptLogits,
		hidden:    req.PromptHidden,
		noSpec:    req.NoSpec,
	}
	if req.BeamWidth > 0 {
		bs, err := e.newBeamSearch(g, req, n)
		if err != nil {
			return nil, err
		}
		g.beam = bs
	}
	for i := range n {
		st := &stream{g: g, index: i}
		if g.beam == nil {
			p := req.Params
			if p.Seed != nil {
				seed := *p.Seed + uint64(i) // vLLM's convention for parallel sampling
				p.Seed = &seed
			}
			sm, err := sample.New(p, e.runner.Vocab())
			if err != nil {
				return nil, &RequestError{Field: "Params", Reason: err.Error(), Err: err}
			}
			if req.Constraint != nil {
				c, err := req.Constraint()
				if err != nil {
					return nil, &RequestError{Field: "Constraint", Reason: "output constraint: " + err.Error(), Err: err}
				}
				sm.SetConstraint(c)
			}
			st.sampler = sm
		}
		st.usage.PromptTokens = len(prompt)
		if e.cfg.Tokenizer != nil {
			st.dec = e.cfg.Tokenizer.NewDecoder()
			st.dec.Prime(prompt)
			if len(req.Params.Stop) > 0 {
				st.stops = sample.NewStopMatcher(req.Params.Stop)
			}
		}
		g.members = append(g.members, st)
	}

	// The watch is registered before the stream is visible to the loop, so
	// the loop never races with this assignment. It may fire at once (ctx
	// already done): admit checks ctx too, whichever intake sees it first.
	g.stopWatch = context.AfterFunc(ctx, func() {
		e.mu.Lock()
		if !e.closed {
			e.cancels = append(e.cancels, g)
		}
		e.mu.Unlock()
		e.poke()
	})
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		g.stopWatch()
		return nil, ErrClosed
	}
	e.nextID++
	g.req.ID = "r" + strconv.FormatInt(e.nextID, 10)
	for i, st := range g.members {
		st.id = g.req.ID
		if i > 0 {
			st.id += "/" + strconv.Itoa(i)
		}
	}
	e.inbox = append(e.inbox, g)
	e.stats.Waiting++ // until the loop publishes
	e.mu.Unlock()
	e.poke()
	return g.ch, nil
}

// Vocab is the length of the model's logit rows: the bound of token ids
// in requests (sample.New's vocabulary size).
func (e *Engine) Vocab() int { return e.runner.Vocab() }

// poke wakes the loop if it sleeps.
func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Close aborts every request (final event: Abort, ErrClosed), stops the
// loop and waits for it. The model is the caller's again afterwards.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.poke()
	<-e.done
	return nil
}
