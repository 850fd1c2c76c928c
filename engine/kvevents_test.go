package engine_test

import (
	"slices"
	"testing"

	"kiln/engine"
	"kiln/kvcache"
	"kiln/sample"
)

// sink records the engine's prefix-cache events, batch by batch.
type sink struct {
	cur     []kvcache.Event
	batches [][]kvcache.Event
}

func (s *sink) Observe(e kvcache.Event) {
	e.Tokens = slices.Clone(e.Tokens)
	s.cur = append(s.cur, e)
}

func (s *sink) Flush() {
	if len(s.cur) > 0 {
		s.batches = append(s.batches, s.cur)
		s.cur = nil
	}
}

// TestKVEvents: a request's full blocks reach Config.KVEvents as
// BlockStored events chained from the first, flushed by the step that
// filled them; a second request with the same prompt stores nothing new.
func TestKVEvents(t *testing.T) {
	m, _ := tiny(t)
	var s sink
	e := newEngine(t, m, engine.Config{NumBlocks: 64, BlockSize: 16, KVEvents: &s})
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = int32(7 + i)
	}
	req := engine.Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 4}}
	run(t, e, req)
	run(t, e, req)
	if err := e.Close(); err != nil { // the loop has stopped: s is ours to read
		t.Fatal(err)
	}
	var stored []kvcache.Event
	for _, b := range s.batches {
		for _, ev := range b {
			if ev.Kind != kvcache.BlockStored {
				t.Errorf("unexpected %v", ev.Kind)
				continue
			}
			stored = append(stored, ev)
		}
	}
	// 40 prompt tokens + 3 fed-back outputs = 43 tokens with KV: two full blocks.
	if len(stored) != 2 {
		t.Fatalf("stored %d blocks (%+v), want 2", len(stored), s.batches)
	}
	if stored[0].HasParent || !stored[1].HasParent || stored[1].Parent != stored[0].Hash ||
		!slices.Equal(stored[0].Tokens, prompt[:16]) || !slices.Equal(stored[1].Tokens, prompt[16:32]) {
		t.Errorf("stored blocks %+v", stored)
	}
	if len(s.cur) != 0 {
		t.Errorf("%d events never flushed", len(s.cur))
	}
}
