package chatloop

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"kiln/engine"
)

// generate answers prompt with one engine request and streams its text to
// out until the engine ends it: an end-of-generation or BOS token, a stop
// string, MaxTokens, a full context, or ctx's cancellation.
//
//	Submit(prompt) -> engine: prefix-cache lookup (earlier turns' KV), prompt chunks, sampling,
//	                  detokenizing and stop strings on its loop
//	events:  text delta -> out   (the engine sends none once ctx is done: Ctrl-C stops the output)
//	final:   stop / length (MaxTokens, or the context: ContextFull) / abort (ctx: Interrupted)
func (s *Session) generate(ctx context.Context, prompt []int32, out io.Writer) (res Result, err error) {
	t0 := time.Now()
	p := s.params
	seed := s.seed + s.answers
	p.Seed = &seed
	s.answers++
	// A model that samples the beginning-of-sequence token has ended its
	// document and starts another (TinyStories models separate stories so,
	// and a base model without a chat template would otherwise run to a
	// full context printing <s>): BOS ends the answer, unprinted, like the
	// end-of-generation tokens the engine stops at.
	if bos := s.tok.Vocab().BOS; bos >= 0 && int(bos) < s.engine.Vocab() && !slices.Contains(p.StopTokens, bos) {
		p.StopTokens = append(slices.Clip(p.StopTokens), bos)
	}
	// The context's KV holds capacity tokens; the last answer token needs
	// none, so an answer may fill it and have one token more.
	room := s.capacity + 1 - len(prompt)
	if p.MaxTokens == 0 || p.MaxTokens > room {
		p.MaxTokens = room
	}
	ch, err := s.engine.Submit(ctx, engine.Request{Prompt: prompt, Params: p})
	if err != nil {
		return res, err
	}

	var (
		text  strings.Builder
		final engine.Event
		werr  error
		first time.Time
	)
	emit := func(piece string) {
		if piece == "" || werr != nil {
			return
		}
		text.WriteString(piece)
		res.Text = text.String()
		werr = write(out, piece)
	}
	// The engine sends no token after ctx's cancellation, so what was
	// generated before the Ctrl-C is all printed, and nothing after.
	for ev := range ch {
		if ev.Done {
			final = ev
		}
		if ev.Token >= 0 {
			if first.IsZero() {
				first = time.Now()
			}
			res.Tokens = append(res.Tokens, ev.Token)
			res.Stats.EvalTokens++
		}
		if !ev.Done || final.Reason != engine.Abort {
			emit(ev.Text) // a final event's text is what the decoder and the stop matcher held back
		}
	}
	end := time.Now()
	if first.IsZero() {
		first = end
	}
	res.Stats.CachedTokens = final.Usage.CachedPromptTokens
	res.Stats.PromptTokens = final.Usage.ComputedPromptTokens
	res.Stats.PromptEval, res.Stats.Eval = first.Sub(t0), end.Sub(first)

	switch {
	case final.Reason == engine.Abort && ctx.Err() == nil && !errors.Is(final.Err, context.Canceled):
		return res, final.Err // the model failed, or the engine closed
	case final.Reason == engine.Abort:
		res.Reason = Interrupted
	case final.Reason == engine.Stop:
		res.Reason = Stop
	case s.params.MaxTokens > 0 && len(res.Tokens) >= s.params.MaxTokens:
		res.Reason = Length
	default:
		res.Reason = ContextFull
	}

	// What the engine holds for the next turn: the prompt's computed part,
	// then the answer's tokens (the last one sampled is never computed).
	s.cached = append(s.cached[:0], prompt[:min(len(prompt), final.Usage.CachedPromptTokens+final.Usage.ComputedPromptTokens)]...)
	if n := len(res.Tokens); n > 0 {
		if res.Reason != Interrupted {
			n--
		}
		s.cached = append(s.cached, res.Tokens[:n]...)
	}
	return res, werr
}

// write writes piece and flushes out when it buffers, so that each piece
// shows as soon as it is decoded.
func write(out io.Writer, piece string) error {
	if _, err := io.WriteString(out, piece); err != nil {
		return err
	}
	if f, ok := out.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}
