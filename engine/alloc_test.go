package engine

import (
	"context"
	"path/filepath"
	"testing"

	"kiln/convert"
	"kiln/gguf"
	"kiln/model"
	"kiln/sample"
	"kiln/synth"
)

// TestDecodeStepAllocs measures the loop's steady-state decode step (16
// requests, one token each, stepped by hand without the loop goroutine)
// and bounds it. What allocates is the scheduler's plan (a fresh Plan with
// per-sequence token and block-table copies, an index map) and its events,
// and the Event values sent; the runner, forward and samplers allocate
// nothing (runner.TestDecodeAllocs).
func TestDecodeStepAllocs(t *testing.T) {
	spec := synth.Spec{Arch: "llama", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 128, VocabSize: 320, Ctx: 1024}
	scheme, err := convert.ParseScheme("Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := synth.Write(path, spec, nil, scheme, 11); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := model.Load(f, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := newEngine(m, Config{NumBlocks: 512})
	if err != nil {
		t.Fatal(err)
	}
	var chs []<-chan Event
	for i := range 16 {
		ch, err := e.Submit(context.Background(), Request{Prompt: []int32{int32(i + 1), 2, 3}, Params: sample.Params{TopP: 1, RepetitionPenalty: 1}})
		if err != nil {
			t.Fatal(err)
		}
		chs = append(chs, ch)
	}
	drain := func() {
		for _, ch := range chs {
			for len(ch) > 0 {
				<-ch
			}
		}
	}
	if !e.intake() {
		t.Fatal("intake: closed")
	}
	for range 5 {
		e.step()
		drain()
	}
	got := testing.AllocsPerRun(50, func() {
		e.step()
		drain()
	})
	if e.Stats().Running != 16 {
		t.Fatalf("stats: %+v", e.Stats())
	}
	t.Logf("steady-state decode step, 16 requests: %v allocations", got)
	if got > 100 {
		t.Errorf("a decode step of 16 requests allocates %v times, want <= 100", got)
	}
}
