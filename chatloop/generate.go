package chatloop

import (
	"context"
	"io"
	"strings"
	"time"

	"kiln/sample"
)

const (
	// promptChunk is how many prompt tokens one Feed gets: small enough that
	// Ctrl-C stops a long prompt within a fraction of a second, large enough
	// that each weight is read once for many tokens.
	promptChunk = 128
	// primeTokens is how much of the prompt the detokenizer sees before the
	// answer, so that the answer's first piece is decoded as a continuation.
	primeTokens = 8
)

// generate answers prompt: it reuses the cached prefix, feeds the rest,
// then samples, streams and feeds back tokens until an end-of-generation
// token, a stop string, MaxTokens, a full cache or ctx's cancellation.
//
//	cached: [ t0 t1 ... tk | stale ... ]      keep = common prefix with prompt (< len(prompt))
//	prompt: [ t0 t1 ... tk | new ...   ]  --> Truncate(keep), Feed(new) -> logits
//	loop:   Sample(logits) -> text to out -> Feed([id]) -> logits
func (s *Session) generate(ctx context.Context, prompt []int32, out io.Writer) (res Result, err error) {
	t0 := time.Now()
	keep := min(commonPrefix(s.cached, prompt), len(prompt)-1)
	s.lm.Truncate(keep)
	s.cached = s.cached[:keep]
	res.Stats.CachedTokens = keep
	logits, err := s.feedPrompt(ctx, prompt[keep:])
	res.Stats.PromptTokens = len(s.cached) - keep
	res.Stats.PromptEval = time.Since(t0)
	if ctx.Err() != nil {
		res.Reason = Interrupted
		return res, nil
	}
	if err != nil {
		return res, err
	}

	t1 := time.Now()
	defer func() { res.Stats.Eval = time.Since(t1) }() // res is the named result: set on every return
	dec := s.tok.NewDecoder()
	dec.Prime(prompt[max(0, len(prompt)-primeTokens):])
	stops := sample.NewStopMatcher(s.params.Stop)
	var text strings.Builder
	emit := func(piece string) error {
		if piece == "" {
			return nil
		}
		text.WriteString(piece)
		res.Text = text.String()
		return write(out, piece)
	}
	for {
		if ctx.Err() != nil {
			res.Reason = Interrupted
			break
		}
		tk, err := s.sampler.Sample(logits, s.cached)
		if err != nil {
			return res, err
		}
		res.Tokens = append(res.Tokens, tk.ID)
		res.Stats.EvalTokens++
		eog := s.isEOG(tk.ID) || s.isBOS(tk.ID)
		if !eog {
			piece, stopped := stops.Push(dec.Add(tk.ID))
			if ctx.Err() != nil { // Ctrl-C while sampling: print nothing more
				res.Reason = Interrupted
				break
			}
			if err := emit(piece); err != nil {
				return res, err
			}
			if stopped {
				res.Reason = Stop
				return res, nil
			}
		}
		if f := s.sampler.Finish(tk.ID, len(res.Tokens), eog); f != sample.NotFinished {
			res.Reason = Reason(f)
			break
		}
		if s.lm.Len() >= s.lm.Cap() {
			res.Reason = ContextFull
			break
		}
		s.one[0] = tk.ID
		if logits, err = s.lm.Feed(s.one[:]); err != nil {
			return res, err
		}
		s.cached = append(s.cached, tk.ID)
	}
	// Interrupted: what the decoder and the stop matcher held back is
	// dropped, so that nothing appears after the Ctrl-C.
	if res.Reason == Interrupted {
		return res, nil
	}
	// The generation ended for another reason than a stop string: what the
	// decoder and the stop matcher held back can no longer change.
	piece, stopped := stops.Push(dec.Flush())
	if stopped {
		res.Reason = Stop
	} else {
		piece += stops.Flush()
	}
	return res, emit(piece)
}

// feedPrompt feeds tokens in chunks, stopping early when ctx is cancelled,
// and returns the logits after the last one.
func (s *Session) feedPrompt(ctx context.Context, tokens []int32) ([]float32, error) {
	var logits []float32
	for len(tokens) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(len(tokens), promptChunk)
		l, err := s.lm.Feed(tokens[:n])
		if err != nil {
			return nil, err
		}
		s.cached = append(s.cached, tokens[:n]...)
		tokens, logits = tokens[n:], l
	}
	return logits, nil
}

// isEOG is the tokenizer's verdict, false for ids past its vocabulary (a
// model's logit rows may be padded beyond it).
func (s *Session) isEOG(id int32) bool {
	return id >= 0 && int(id) < s.tok.Size() && s.tok.IsEOG(id)
}

// isBOS reports whether id is the beginning-of-sequence token. A model
// that samples it has ended its document and starts another (TinyStories
// models separate stories so, and a base model without a chat template
// would otherwise run to a full context printing <s>): it ends the answer
// like an end-of-generation token.
func (s *Session) isBOS(id int32) bool {
	bos := s.tok.Vocab().BOS
	return bos >= 0 && id == bos
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

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
