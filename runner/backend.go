package runner

import "kiln/model"

// Backend is what a Runner drives: forward passes over a paged KV store
// whose block ids the caller (kvcache, through the scheduler's plans)
// hands out. A model.Model over its model.KVStore is the real one (New);
// tests plug in scripted doubles (NewBackend) to drive the whole engine
// without weights.
type Backend interface {
	// Vocab is the length of a logit row.
	Vocab() int
	// Context is the most positions one sequence may hold.
	Context() int
	// Forward writes the KV of b's tokens into the blocks b's tables name
	// and returns the logits of b.LogitRows, [len(LogitRows)][Vocab()],
	// valid until the next call.
	Forward(b *model.Batch) ([]float32, error)
	// CopyBlock copies every layer's keys and values of block src into
	// block dst (copy-on-write).
	CopyBlock(src, dst int) error
}

// HiddenBackend is a Backend that also hands out the final-norm hidden
// rows of its last Forward's LogitRows, [len(LogitRows)][Dim()]
// (KeepPromptHidden: embeddings).
type HiddenBackend interface {
	Backend
	Dim() int
	Hidden() []float32
}

// ModelBackend is model m over its KV store kv (what New runs; the
// engine's draft model runs on one too).
func ModelBackend(m *model.Model, kv *model.KVStore) Backend { return modelBackend{m, kv} }

// modelBackend is a model over its KV store.
type modelBackend struct {
	m  *model.Model
	kv *model.KVStore
}

func (b modelBackend) Vocab() int                                    { return b.m.Config.Vocab }
func (b modelBackend) Context() int                                  { return b.m.Config.Context }
func (b modelBackend) Forward(batch *model.Batch) ([]float32, error) { return b.m.Forward(batch, b.kv) }
func (b modelBackend) Dim() int                                      { return b.m.Config.Dim }
func (b modelBackend) Hidden() []float32                             { return b.m.Hidden() }
func (b modelBackend) CopyBlock(src, dst int) error                  { return b.kv.CopyBlock(src, dst) }
