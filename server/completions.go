package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"kiln/engine"
	"kiln/tokenizer"
)

// handleCompletions serves POST /v1/completions.
func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	var q completionRequest
	sl := s.openRequest(w, r, &q)
	if sl == nil {
		return
	}
	defer s.reg.release(sl)
	m := sl.m
	j, err := s.completionJob(sl, &q)
	if err != nil {
		writeError(w, err)
		return
	}
	prompts := j.prompts
	items, err := j.start(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	defer j.cancel()
	c := &completionWriter{s: s, j: j, tok: m.Tokenizer, id: newID("cmpl-"), created: s.cfg.Now().Unix(), model: q.Model,
		logprobs: j.params.Logprobs, choices: make([]completionChoice, len(prompts)*j.n), offsets: make([]int, len(prompts)*j.n),
		echo: q.Echo, promptTop: -1, scored: make([]scoredPrompt, len(prompts))}
	if q.PromptLogprobs != nil {
		c.promptTop = *q.PromptLogprobs
	}
	if q.Echo {
		c.echoed = make([]echoedPrompt, len(prompts))
		for i, p := range prompts {
			c.echoed[i] = echoPrompt(m.Tokenizer, p)
			for k := range j.n {
				c.offsets[i*j.n+k] = c.echoed[i].runes
			}
		}
	}
	if q.Stream {
		c.stream(r.Context(), w, items, q.StreamOptions != nil && q.StreamOptions.IncludeUsage)
	} else {
		c.whole(r.Context(), w, items)
	}
}

// completionJob turns a completions body into its job: the prompts
// tokenized, the sampling fields and logprobs checked.
func (s *Server) completionJob(sl *slot, q *completionRequest) (*job, error) {
	prompts, err := parsePrompt(q.Prompt, sl.m.Tokenizer)
	if err != nil {
		return nil, err
	}
	sq := q.samplingRequest
	scoring := q.PromptLogprobs != nil || (q.Echo && q.Logprobs != nil) // the prompt's rows are needed
	scoreOnly := (q.Echo || q.PromptLogprobs != nil) && q.MaxTokens != nil && *q.MaxTokens == 0
	if scoreOnly {
		// max_tokens 0 scores the prompt only: the engine samples one
		// token (it has no zero), which the writer drops.
		one := 1
		sq.MaxTokens = &one
	}
	j, err := s.newJob(sl, &sq, prompts, "prompt")
	if err != nil {
		return nil, err
	}
	j.scoreOnly = scoreOnly
	if q.Logprobs != nil {
		if err := s.checkLogprobs("logprobs", *q.Logprobs); err != nil {
			return nil, err
		}
		j.params.Logprobs, j.params.TopLogprobs = true, *q.Logprobs
	}
	if q.PromptLogprobs != nil {
		if err := s.checkLogprobs("prompt_logprobs", *q.PromptLogprobs); err != nil {
			return nil, err
		}
	}
	if scoring {
		if j.beamWidth > 0 {
			return nil, badRequest("prompt_logprobs", "prompt log-probabilities (prompt_logprobs, or echo with logprobs) do not combine with use_beam_search")
		}
		vocab := sl.m.Tokenizer.Size()
		var tokens int64
		for _, p := range prompts {
			tokens += int64(len(p))
		}
		if tokens*int64(vocab)*4 > maxPromptLogitBytes {
			return nil, badRequest("prompt", "the prompts have %d tokens: scoring them (echo with logprobs, or prompt_logprobs) needs their logit rows over a %d-token vocabulary, over the server's %d MiB per request",
				tokens, vocab, maxPromptLogitBytes>>20)
		}
		j.promptRows = true
	}
	return j, nil
}

// unsupported refuses known fields kiln does not implement, rather than
// ignoring them and answering something else than asked.
func (q *completionRequest) unsupported() error {
	switch {
	case q.Stream && q.Echo:
		return badRequest("echo", "echo is not supported with stream (ask without stream)")
	case q.Stream && q.PromptLogprobs != nil:
		return badRequest("prompt_logprobs", "prompt_logprobs is not supported with stream (ask without stream)")
	case q.Suffix != nil && *q.Suffix != "":
		return badRequest("suffix", "suffix is not supported")
	case q.BestOf != nil && *q.BestOf != 1 && (q.N == nil || *q.BestOf != *q.N):
		return badRequest("best_of", "best_of is not supported (use n, or use_beam_search with n beams)")
	}
	return nil
}

// parsePrompt reads "prompt": a string, a list of strings, a list of token
// ids, or a list of such lists. Text is tokenized as vLLM does for
// completions (special tokens parsed, BOS as the model asks).
func parsePrompt(raw json.RawMessage, tok *tokenizer.Tokenizer) ([][]int32, error) {
	raw = bytes.TrimSpace(raw)
	bad := func() error {
		return badRequest("prompt", "prompt must be a string, a list of strings, a list of token ids or a list of lists of token ids")
	}
	if isNull(raw) {
		return nil, badRequest("prompt", "prompt is required")
	}
	var prompts [][]int32
	switch raw[0] {
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, bad()
		}
		prompts = [][]int32{tok.EncodePrompt(text)}
	case '[':
		var texts []string
		var ids []int32
		var lists [][]int32
		switch {
		case json.Unmarshal(raw, &texts) == nil:
			for _, t := range texts {
				prompts = append(prompts, tok.EncodePrompt(t))
			}
		case json.Unmarshal(raw, &ids) == nil:
			prompts = [][]int32{ids}
		case json.Unmarshal(raw, &lists) == nil:
			prompts = lists
		default:
			return nil, bad()
		}
	default:
		return nil, bad()
	}
	if len(prompts) == 0 {
		return nil, badRequest("prompt", "prompt is an empty list")
	}
	if len(prompts) > maxPrompts {
		return nil, badRequest("prompt", "%d prompts in one request; at most %d", len(prompts), maxPrompts)
	}
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, badRequest("prompt", "prompt %d is empty", i)
		}
		for _, id := range p {
			if id < 0 || int(id) >= tok.Size() {
				return nil, badRequest("prompt", "prompt %d holds token id %d, outside the vocabulary [0, %d)", i, id, tok.Size())
			}
		}
	}
	return prompts, nil
}

// newJob checks the sampling fields against the model and the prompts
// against its context.
func (s *Server) newJob(sl *slot, q *samplingRequest, prompts [][]int32, promptParam string) (*job, error) {
	m := sl.m
	p, err := q.params(m.Tokenizer.Size())
	if err != nil {
		return nil, err
	}
	n, err := q.completions(m.MaxSeqs, len(prompts))
	if err != nil {
		return nil, err
	}
	j := &job{srv: s, slot: sl, prompts: prompts, params: p, n: n, ignoreEOS: q.IgnoreEOS, priority: q.Priority, promptParam: promptParam}
	if q.UseBeamSearch {
		j.beamWidth, j.lengthPen = n, 1
		if q.LengthPenalty != nil {
			j.lengthPen = *q.LengthPenalty
		}
	} else if q.LengthPenalty != nil {
		return nil, badRequest("length_penalty", "length_penalty applies to beam search (use_beam_search)")
	}
	spec, err := q.spec()
	if err != nil {
		return nil, err
	}
	if spec != nil {
		if j.constraint, err = s.constraint(sl, spec); err != nil {
			return nil, err
		}
	}
	for _, prompt := range prompts {
		mt, err := q.maxTokens(len(prompt), m.MaxModelLen)
		if err != nil {
			if ae := asAPIError(err); ae.Param == "messages" {
				ae.Param = promptParam
			}
			return nil, err
		}
		j.maxTokens = append(j.maxTokens, mt)
	}
	return j, nil
}

// newID is an OpenAI-style response id: prefix and 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// completionWriter builds a text_completion response, whole or streamed.
type completionWriter struct {
	s        *Server
	j        *job
	tok      *tokenizer.Tokenizer
	id       string
	created  int64
	model    string
	logprobs bool
	choices  []completionChoice
	offsets  []int // characters of text so far, per choice (text_offset); with echo, the prompt's included
	usage    usageSum

	echo      bool
	echoed    []echoedPrompt // per prompt, with echo
	promptTop int            // prompt_logprobs; -1: not asked
	scored    []scoredPrompt // per prompt, once its logit rows arrived
	failed    error          // scoring a prompt failed
}

// add folds one event into its choice and returns the chunk's delta.
func (c *completionWriter) add(it item) completionChoice {
	i := c.j.choice(it)
	ev := it.ev
	if ev.PromptLogits != nil {
		c.score(it.prompt, ev.PromptLogits)
	}
	if c.j.scoreOnly { // max_tokens 0: the engine's one token is not the client's
		ev.Token, ev.Text, ev.Usage.CompletionTokens = -1, "", 0
		if ev.Done {
			ev.Reason = engine.Length
		}
	}
	delta := completionChoice{Index: i, Text: ev.Text}
	if c.logprobs && ev.Token >= 0 {
		lp := &completionLogprobs{Tokens: []string{c.tok.Piece(ev.Token)}, TokenLogprobs: []*float32{&ev.Logprob},
			TopLogprobs: []map[string]float32{topMap(c.tok, ev)}, TextOffset: []int{c.offsets[i]}}
		delta.Logprobs = lp
		all := c.choices[i].Logprobs
		if all == nil {
			all = &completionLogprobs{}
			c.choices[i].Logprobs = all
		}
		all.Tokens = append(all.Tokens, lp.Tokens...)
		all.TokenLogprobs = append(all.TokenLogprobs, lp.TokenLogprobs...)
		all.TopLogprobs = append(all.TopLogprobs, lp.TopLogprobs...)
		all.TextOffset = append(all.TextOffset, lp.TextOffset...)
	}
	c.offsets[i] += utf8.RuneCountInString(ev.Text)
	c.choices[i].Index = i
	c.choices[i].Text += ev.Text
	if ev.Done {
		reason := finishReason(ev.Reason)
		delta.FinishReason = &reason
		c.choices[i].FinishReason = &reason
		c.usage.add(ev)
	}
	return delta
}

// score computes prompt i's log-probabilities from its logit rows.
func (c *completionWriter) score(i int, rows []float32) {
	topLegacy := -1
	if c.echo && c.logprobs {
		topLegacy = c.j.params.TopLogprobs
	}
	var e echoedPrompt
	if c.echo {
		e = c.echoed[i]
	}
	s, err := scorePrompt(c.tok, c.j.prompts[i], rows, e, topLegacy, c.promptTop)
	if err != nil && c.failed == nil {
		c.failed = internal(err)
	}
	c.scored[i] = s
}

// finish puts the echoed prompts and their log-probabilities into the
// choices of a whole response.
func (c *completionWriter) finish() {
	for ch := range c.choices {
		i := ch / c.j.n
		if c.echo {
			c.choices[ch].Text = c.echoed[i].text + c.choices[ch].Text
			if c.logprobs {
				s := c.scored[i].legacy
				if s == nil { // a one-token prompt has no rows to score: its token is null
					s = &completionLogprobs{Tokens: c.echoed[i].pieces, TokenLogprobs: make([]*float32, len(c.j.prompts[i])),
						TopLogprobs: make([]map[string]float32, len(c.j.prompts[i])), TextOffset: c.echoed[i].offsets}
				}
				c.choices[ch].Logprobs = s.prepend(c.choices[ch].Logprobs)
			}
		}
		if c.promptTop >= 0 {
			if c.choices[ch].PromptLogprobs = c.scored[i].vllm; c.choices[ch].PromptLogprobs == nil {
				c.choices[ch].PromptLogprobs = make([]map[string]promptLogprob, len(c.j.prompts[i]))
			}
		}
	}
}

// topMap is the legacy top_logprobs entry: piece -> logprob, the sampled
// token included.
func topMap(tok *tokenizer.Tokenizer, ev engine.Event) map[string]float32 {
	m := make(map[string]float32, len(ev.Top)+1)
	for _, t := range ev.Top {
		m[tok.Piece(t.ID)] = t.Logprob
	}
	m[tok.Piece(ev.Token)] = ev.Logprob
	return m
}

func (c *completionWriter) whole(ctx context.Context, w http.ResponseWriter, items <-chan item) {
	var failed error
	for it := range items {
		c.j.observe(it)
		c.add(it)
		if err := engineError(it.ev); err != nil && failed == nil {
			failed = err
		}
	}
	if cutByShutdown(ctx) {
		writeError(w, errShutdownCut)
		return
	}
	if ctx.Err() != nil {
		return // the client left; nothing to answer
	}
	if failed == nil {
		failed = c.failed
	}
	if failed != nil {
		writeError(w, failed)
		return
	}
	c.finish()
	writeJSON(w, http.StatusOK, completionResponse{ID: c.id, Object: "text_completion", Created: c.created, Model: c.model,
		Choices: c.choices, Usage: c.usage.get()})
}

func (c *completionWriter) stream(ctx context.Context, w http.ResponseWriter, items <-chan item, includeUsage bool) {
	sse := newSSE(w, c.s.cfg.WriteTimeout)
	chunk := completionResponse{ID: c.id, Object: "text_completion", Created: c.created, Model: c.model}
	one := make([]completionChoice, 1)
	var failed error
	for it := range items {
		c.j.observe(it)
		delta := c.add(it)
		if err := engineError(it.ev); err != nil && failed == nil {
			failed = err
		}
		if sse.err != nil || (delta.Text == "" && delta.Logprobs == nil && delta.FinishReason == nil) {
			continue
		}
		one[0] = delta
		chunk.Choices = one
		if sse.send(chunk) != nil {
			c.j.cancel() // the client is gone: abort, then drain
		}
	}
	if sse.err != nil || (ctx.Err() != nil && !cutByShutdown(ctx)) {
		return // the client left: nobody to tell
	}
	if cutByShutdown(ctx) {
		failed = errShutdownCut
	}
	if failed != nil {
		sse.send(asAPIError(failed).envelope())
	} else if includeUsage {
		sse.send(completionResponse{ID: c.id, Object: "text_completion", Created: c.created, Model: c.model,
			Choices: []completionChoice{}, Usage: c.usage.get()})
	}
	sse.done()
}
