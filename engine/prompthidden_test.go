package engine_test

import (
	"context"
	"slices"
	"testing"

	"kiln/engine"
	"kiln/model"
	"kiln/runner/scripted"
	"kiln/sample"
)

// TestPromptHidden: PromptHidden delivers the final-norm hidden rows of
// the prompt's last positions, [rows][Dim], equal to a whole-prompt
// forward's, whether the prompt ran in chunks or its head came from the
// prefix cache; a backend without hidden states aborts the request.
func TestPromptHidden(t *testing.T) {
	m, _ := tiny(t)
	prompt := make([]int32, 50)
	for i := range prompt {
		prompt[i] = int32(i*37%300 + 3)
	}
	dim := m.Config.Dim
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: 4, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	b := model.Batch{Tokens: prompt, SeqStarts: []int32{0, 50}, BlockTables: [][]int32{{0, 1, 2, 3}}, ContextLens: []int32{50}}
	for i := range prompt {
		b.Positions = append(b.Positions, int32(i))
		b.LogitRows = append(b.LogitRows, int32(i))
	}
	if _, err := m.Forward(&b, kv); err != nil {
		t.Fatal(err)
	}
	all := slices.Clone(m.Hidden()[:50*dim])

	e := newEngine(t, m, engine.Config{NumBlocks: 16, MaxBatchedTokens: 16})
	for _, rows := range []int{50, 1, 20, 1} {
		ch, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 1},
			PromptLogits: rows, PromptHidden: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []float32
		for ev := range ch {
			if ev.PromptLogits != nil {
				got = ev.PromptLogits
			}
		}
		if want := all[(50-rows)*dim:]; !slices.Equal(got, want) {
			t.Errorf("%d rows: %d hidden values differ from a whole-prompt forward's %d", rows, len(got), len(want))
		}
	}
	if _, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: sample.Defaults(), PromptHidden: true}); err == nil {
		t.Error("PromptHidden without PromptLogits rows was accepted")
	}

	sm := &scripted.Model{VocabSize: 8, Ctx: 256, BlockSize: 4, Next: func(h []int32, row []float32) { row[len(h)%8] = 1 }}
	se, err := engine.NewBackend(sm, engine.Config{NumBlocks: 32, BlockSize: 4, MaxBatchedTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer se.Close()
	ch, err := se.Submit(context.Background(), engine.Request{Prompt: []int32{1, 2, 3}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 1},
		PromptLogits: 1, PromptHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	var final engine.Event
	for ev := range ch {
		final = ev
	}
	if final.Reason != engine.Abort || final.Err == nil {
		t.Errorf("a backend without hidden states: final event %+v, want an abort with its error", final)
	}
}
