package chatloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"kiln/chat"
	"kiln/sample"
	"kiln/tokenizer"
)

// ErrInput marks an error in what the user asked for (a message too long
// for the context, a template that refuses the conversation, a bad /set
// value): the chat reports it and goes on. Other errors (the model failing,
// the output closed) end the chat.
var ErrInput = errors.New("chatloop: bad input")

func inputErrorf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, a...))
}

// Options configure a Session.
type Options struct {
	Engine    Engine               // required: runs the answers
	Context   int                  // required: the conversation's room in tokens of KV (see Engine)
	Tokenizer *tokenizer.Tokenizer // required: the engine's; its end-of-generation ids end answers
	Prompter  Prompter             // required: TemplatePrompter or RawPrompter
	Params    sample.Params        // checked by New (sample.Params.Validate and the vocabulary size)
	System    string               // system message; "" for none

	// Reserve is how many free tokens a turn wants for its answer: older
	// messages are dropped while the prompt leaves fewer. 0: a quarter of
	// the cache, or Params.MaxTokens when that is smaller.
	Reserve int

	Load  time.Duration // model load time, reported with the first turn's Stats
	Stats io.Writer     // REPL: where each turn's Stats.Report goes; nil: not reported
}

// Session is one conversation with a model: its messages, the sampling
// parameters, and the tokens of the last turn (prompt and answer) whose
// KV the engine computed, for /show.
type Session struct {
	engine   Engine
	capacity int // Options.Context
	tok      *tokenizer.Tokenizer
	prompter Prompter
	params   sample.Params
	seed     uint64 // of the current random stream: answer k since SetParams is seeded seed+k
	answers  uint64 // answers since SetParams
	system   string
	msgs     []chat.Message // user and assistant turns, oldest first (the system message is kept apart)
	cached   []int32        // the last turn's prompt and computed answer tokens
	reserve  int
	load     time.Duration // reported once, then zeroed
	stats    io.Writer
}

// New starts an empty conversation.
func New(o Options) (*Session, error) {
	if o.Engine == nil || o.Tokenizer == nil || o.Prompter == nil {
		return nil, fmt.Errorf("chatloop: Options need Engine, Tokenizer and Prompter")
	}
	if o.Context <= 0 {
		return nil, fmt.Errorf("chatloop: Context %d is not positive", o.Context)
	}
	if o.Reserve < 0 {
		return nil, fmt.Errorf("chatloop: Reserve %d is negative", o.Reserve)
	}
	s := &Session{engine: o.Engine, capacity: o.Context, tok: o.Tokenizer, prompter: o.Prompter, system: o.System, reserve: o.Reserve, load: o.Load, stats: o.Stats}
	if err := s.SetParams(o.Params); err != nil {
		return nil, err
	}
	return s, nil
}

// Params returns the sampling parameters in use.
func (s *Session) Params() sample.Params { return s.params }

// SetParams replaces the sampling parameters (and restarts the random
// stream: with a fixed Seed the next answer replays; answer k after it is
// seeded Seed+k, so that a chat's answers do not repeat one stream).
// Invalid parameters are an ErrInput and change nothing.
func (s *Session) SetParams(p sample.Params) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	sm, err := sample.New(p, s.engine.Vocab()) // checks ids against the model, draws a seed when none is set
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	s.params, s.seed, s.answers = p, sm.Seed(), 0
	return nil
}

// Seed is the seed of the current random stream (drawn when Params.Seed is nil).
func (s *Session) Seed() uint64 { return s.seed }

// System returns the system message ("" for none).
func (s *Session) System() string { return s.system }

// SetSystem replaces the system message for the following turns.
func (s *Session) SetSystem(text string) { s.system = text }

// Messages returns the conversation so far, system message first.
func (s *Session) Messages() []chat.Message {
	return s.conversation(s.msgs)
}

// Clear forgets the conversation (the system message stays). The engine's
// prefix cache keeps the KV: the next turn reuses whatever prefix still
// matches.
func (s *Session) Clear() { s.msgs = nil }

// CacheLen is the number of tokens of the last turn (its prompt and the
// answer tokens computed) whose KV the engine holds for the next turn.
func (s *Session) CacheLen() int { return len(s.cached) }

// conversation puts the system message in front of msgs.
func (s *Session) conversation(msgs []chat.Message) []chat.Message {
	out := make([]chat.Message, 0, len(msgs)+1)
	if s.system != "" {
		out = append(out, chat.Message{Role: "system", Content: s.system})
	}
	return append(out, msgs...)
}

// Turn adds the user's message, streams the answer to out and adds it (even
// when cut short: an interrupted answer stays in the conversation, unless
// nothing of it was written, in which case the user's message goes too).
// Cancelling ctx is how to interrupt it: the result then has Reason
// Interrupted and err nil.
func (s *Session) Turn(ctx context.Context, user string, out io.Writer) (Result, error) {
	start := time.Now()
	msgs := append(slices.Clip(s.msgs), chat.Message{Role: "user", Content: user})
	prompt, dropped, err := s.fit(msgs)
	if err != nil {
		return Result{}, err
	}
	s.msgs = msgs[dropped:]
	res, err := s.generate(ctx, prompt, out)
	res.Dropped = dropped
	res.Stats.Load, s.load = s.load, 0
	res.Stats.Total = time.Since(start) + res.Stats.Load
	if err != nil {
		return res, err
	}
	if res.Reason == Interrupted && res.Text == "" {
		s.msgs = s.msgs[:len(s.msgs)-1]
	} else {
		s.msgs = append(s.msgs, chat.Message{Role: "assistant", Content: res.Text})
	}
	return res, nil
}

// fit renders msgs (the last one the new user message) and drops the oldest
// turns until the prompt leaves the reserve free in the cache:
//
//	cache: [ system | u1 a1 | u2 a2 | ... | new user, assistant header ] [ reserve ... ]
//	                  ^ dropped first, a whole user+assistant pair at a time
//
// When only the new message is left it is accepted as long as one token of
// room remains. It returns the prompt and how many messages to drop.
func (s *Session) fit(msgs []chat.Message) ([]int32, int, error) {
	capacity := s.capacity
	reserve := s.reserve
	if reserve == 0 {
		reserve = capacity / 4
		if m := s.params.MaxTokens; m > 0 && m < reserve {
			reserve = m
		}
	}
	for dropped := 0; ; {
		prompt, err := s.prompter(s.conversation(msgs[dropped:]))
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %v", ErrInput, err)
		}
		last := dropped == len(msgs)-1
		if len(prompt)+reserve <= capacity || (last && len(prompt) < capacity) {
			return prompt, dropped, nil
		}
		if last {
			return nil, 0, inputErrorf("the message does not fit: its prompt is %d tokens, the context %d", len(prompt), capacity)
		}
		// Drop the oldest message and whatever follows it up to the next
		// user message, so the conversation still starts with the user.
		dropped++
		for dropped < len(msgs)-1 && msgs[dropped].Role != "user" {
			dropped++
		}
	}
}
