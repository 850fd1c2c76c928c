package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"kiln/engine"
	"kiln/sample"
)

// job is one API request's work on the engine: one engine request per
// prompt, each with n completions. Choice i*n+k is completion k of prompt
// i, as OpenAI numbers them.
type job struct {
	srv         *Server
	slot        *slot
	prompts     [][]int32
	params      sample.Params // MaxTokens per prompt: maxTokens
	maxTokens   []int
	n           int
	ignoreEOS   bool
	priority    int
	constraint  func() (sample.Constraint, error) // structured output; nil: none
	beamWidth   int                               // > 0: beam search (vLLM's use_beam_search)
	lengthPen   float64
	promptRows  bool   // ask the engine for each prompt's logit rows (echo.go)
	scoreOnly   bool   // max_tokens 0 (echo.go): drop the one token the engine samples
	promptParam string // the request field of the prompts: "prompt" or "messages"

	// Filled while it runs.
	queued   []bool      // prompt i still counts against Config.MaxQueue
	lastTok  []time.Time // per choice: when its last token arrived (inter-token latency)
	finished int         // choices ended
	cancel   func()      // aborts every completion (the client is gone)
}

// paramOf names the request field behind an engine.Request field that
// the engine refused (engine.RequestError.Field).
func (j *job) paramOf(field string) string {
	switch field {
	case "Prompt":
		return j.promptParam
	case "N":
		return "n"
	case "BeamWidth":
		return "n" // the beam width is n (or best_of)
	case "LengthPenalty":
		return "length_penalty"
	case "PromptLogits":
		return "prompt_logprobs"
	}
	return "" // Params, Constraint: checked field by field before they reach the engine
}

// promptLogits is the engine's PromptLogits for a prompt: every
// position's row when asked (the last, after the prompt, unused), none for
// a one-token prompt (nothing before its token to score it).
func (j *job) promptLogits(prompt []int32) int {
	if !j.promptRows || len(prompt) < 2 {
		return 0
	}
	return len(prompt)
}

// item is one event of the job's merged stream.
type item struct {
	prompt int
	ev     engine.Event
}

// choice is the OpenAI choice index of an event.
func (j *job) choice(it item) int { return it.prompt*j.n + it.ev.Index }

// start submits every prompt and merges their streams into one channel,
// which closes when every completion has ended. The job holds queue
// places (Config.MaxQueue) until each prompt's first event. ctx is the
// HTTP request's: cancelling it aborts everything within a step.
func (j *job) start(ctx context.Context) (<-chan item, error) {
	if err := j.srv.reserve(len(j.prompts)); err != nil {
		return nil, err
	}
	j.queued = make([]bool, len(j.prompts))
	for i := range j.queued {
		j.queued[i] = true
	}
	j.lastTok = make([]time.Time, len(j.prompts)*j.n)
	ctx, cancel := context.WithCancel(ctx)
	j.cancel = cancel
	chans := make([]<-chan engine.Event, 0, len(j.prompts))
	for i, prompt := range j.prompts {
		p := j.params
		p.MaxTokens = j.maxTokens[i]
		ch, err := j.slot.m.Engine.Submit(ctx, engine.Request{Prompt: prompt, Params: p, N: j.n, IgnoreEOS: j.ignoreEOS, Priority: j.priority, Constraint: j.constraint,
			BeamWidth: j.beamWidth, LengthPenalty: j.lengthPen, PromptLogits: j.promptLogits(prompt)})
		if err != nil {
			cancel()
			for _, ch := range chans { // aborted: their channels close within a step
				for range ch {
				}
			}
			j.srv.unreserve(len(j.prompts))
			if errors.Is(err, engine.ErrClosed) {
				return nil, errDraining
			}
			var re *engine.RequestError
			if errors.As(err, &re) {
				return nil, badRequest(j.paramOf(re.Field), "%s", re.Reason)
			}
			return nil, internal(err) // the engine's setup, not the request
		}
		chans = append(chans, ch)
	}
	out := make(chan item, 16)
	var wg sync.WaitGroup
	for i, ch := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range ch { // the handler reads every item to the end, cancelled or not
				out <- item{i, ev}
			}
		}()
	}
	go func() {
		wg.Wait()
		cancel()
		close(out)
	}()
	return out, nil
}

// observe does the per-event bookkeeping shared by every endpoint: the
// queue place, the inter-token latencies, and at each completion's end
// its metrics. Call it for every item, in order.
func (j *job) observe(it item) {
	now := time.Now()
	if j.queued[it.prompt] {
		j.queued[it.prompt] = false
		j.srv.unreserve(1)
	}
	c := j.choice(it)
	mt := j.srv.metrics
	name := j.slot.name
	if it.ev.Token >= 0 {
		if !j.lastTok[c].IsZero() {
			mt.itl.WithLabelValues(name).Observe(now.Sub(j.lastTok[c]).Seconds())
		}
		j.lastTok[c] = now
	}
	if !it.ev.Done {
		return
	}
	j.finished++
	ev := it.ev
	mt.requestSuccess.WithLabelValues(name, finishReason(ev.Reason)).Inc()
	mt.e2e.WithLabelValues(name).Observe(ev.Timings.Total.Seconds())
	mt.queueTime.WithLabelValues(name).Observe(ev.Timings.Queued.Seconds())
	if ev.Timings.FirstToken > 0 {
		mt.ttft.WithLabelValues(name).Observe(ev.Timings.FirstToken.Seconds())
	}
	mt.generationTokens.WithLabelValues(name).Add(float64(ev.Usage.CompletionTokens))
	if ev.Index == 0 { // the prompt is computed once for its n completions
		mt.promptTokens.WithLabelValues(name).Add(float64(ev.Usage.PromptTokens))
	}
}

// finishReason is OpenAI's name for an engine's reason.
func finishReason(r engine.FinishReason) string {
	switch r {
	case engine.Stop:
		return "stop"
	case engine.Length:
		return "length"
	}
	return "abort"
}

// usageSum sums the final events' usage: prompts once each, completions all.
type usageSum struct{ u usage }

func (s *usageSum) add(ev engine.Event) {
	if ev.Index == 0 {
		s.u.PromptTokens += ev.Usage.PromptTokens
		if s.u.PromptTokensDetails == nil {
			s.u.PromptTokensDetails = &promptDetails{}
		}
		s.u.PromptTokensDetails.CachedTokens += ev.Usage.CachedPromptTokens
	}
	s.u.CompletionTokens += ev.Usage.CompletionTokens
	s.u.TotalTokens = s.u.PromptTokens + s.u.CompletionTokens
}

func (s *usageSum) get() *usage {
	u := s.u
	if u.PromptTokensDetails == nil {
		u.PromptTokensDetails = &promptDetails{}
	}
	return &u
}

// engineError is an aborted completion's error as the client sees it:
// none for a plain cancellation (the client left), else a 500 (the engine
// failed a step) or 503 (the server closed the model).
func engineError(ev engine.Event) error {
	if ev.Reason != engine.Abort || ev.Err == nil {
		return nil
	}
	if errors.Is(ev.Err, engine.ErrClosed) {
		return errDraining
	}
	return internal(ev.Err)
}
