package engine

import (
	"fmt"

	"kiln/model"
	"kiln/runner"
)

// newDrafter sets up the draft model of cfg (filled) for a target of
// vocab logits (Speculation{Method: "draft"}; runner.Drafter drives it):
// over Spec.DraftBackend, or over a new store for Spec.Draft of the
// target's blocks plus the drafter's scratch blocks.
func newDrafter(cfg *Config, vocab int) (*runner.Drafter, error) {
	s := &cfg.Spec
	dc := runner.DrafterConfig{Tokens: s.Tokens, BlockSize: cfg.BlockSize, NumBlocks: cfg.NumBlocks, MaxAsks: min(s.MaxSeqs, cfg.MaxSeqs), Now: cfg.Now}
	var b runner.Backend
	switch {
	case s.DraftBackend != nil:
		b = s.DraftBackend
	case s.Draft != nil:
		kv, err := s.Draft.NewKVStore(model.KVStoreOptions{NumBlocks: cfg.NumBlocks + dc.ScratchBlocks(), BlockSize: cfg.BlockSize, Type: cfg.kvType()})
		if err != nil {
			return nil, fmt.Errorf("engine: draft model: %w", err)
		}
		b = runner.ModelBackend(s.Draft, kv)
	default:
		return nil, fmt.Errorf("engine: speculative method draft needs Speculation.Draft (or DraftBackend)")
	}
	d, err := runner.NewDrafter(b, dc, vocab)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return d, nil
}
