package chatloop

import (
	"context"
	"sync"
)

// Interrupts routes an interrupt (Ctrl-C) to the generation in flight: it
// cancels that generation's context and nothing else. When no generation
// is running, Interrupt reports false and the caller decides (the command
// exits). The zero value is ready; a nil *Interrupts never interrupts.
type Interrupts struct {
	mu     sync.Mutex
	cancel context.CancelFunc // of the generation in flight; nil between generations
}

// Begin starts a generation: its context is cancelled by Interrupt or with
// parent. Call end when the generation is over.
func (i *Interrupts) Begin(parent context.Context) (ctx context.Context, end func()) {
	ctx, cancel := context.WithCancel(parent)
	if i == nil {
		return ctx, cancel
	}
	i.mu.Lock()
	i.cancel = cancel
	i.mu.Unlock()
	return ctx, func() {
		i.mu.Lock()
		i.cancel = nil
		i.mu.Unlock()
		cancel()
	}
}

// Interrupt cancels the generation in flight and reports whether there was one.
func (i *Interrupts) Interrupt() bool {
	if i == nil {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.cancel == nil {
		return false
	}
	i.cancel()
	i.cancel = nil
	return true
}
