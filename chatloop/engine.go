package chatloop

import (
	"context"

	"kiln/engine"
)

// Engine runs a session's answers: *engine.Engine is one (kiln run builds
// it over the model; chattest over a scripted one). Each answer is one
// request whose prompt is the whole conversation: the engine's prefix
// cache finds what earlier turns computed, and cancelling the request's
// context (Ctrl-C) aborts it.
//
// The engine should allow requests of the session's Context+1 tokens
// (Config.MaxModelLen and its pool): a turn's KV fills at most Context
// token slots, and the token sampled last needs none.
type Engine interface {
	Submit(ctx context.Context, req engine.Request) (<-chan engine.Event, error)
	// Vocab is the length of the model's logit rows (sample.New's bound).
	Vocab() int
}
