package assemble

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"kiln/convert"
	"kiln/engine"
	"kiln/kernels"
	"kiln/sample"
	"kiln/synth"
)

// tinyGGUF writes the tiny synthetic model (Q8_0, a synthetic tokenizer)
// and returns its path.
func tinyGGUF(t *testing.T, vocab int) string {
	t.Helper()
	spec := synth.Spec{Arch: "llama", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 128, VocabSize: vocab, Ctx: 1024}
	scheme, err := convert.ParseScheme("Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := synth.Write(path, spec, nil, scheme, 11); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpenKVSizing: the pool is the budget over a block's bytes (the
// model's and the draft's), capped at what Seqs sequences of PerSeq
// tokens use; a budget short of one sequence is a *PoolError.
func TestOpenKVSizing(t *testing.T) {
	path := tinyGGUF(t, 320)
	a, err := Load(Options{Model: path, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	per := a.Model.Config.KVBytesPerBlock(16, kernels.KVF16) // F16 elements
	for _, c := range []struct {
		kv   KV
		want int
	}{
		{KV{Budget: int64(10*per + per/2), BlockSize: 16, PerSeq: 64, Seqs: 8}, 10}, // the budget binds
		{KV{Budget: 1 << 30, BlockSize: 16, PerSeq: 65, Seqs: 3}, 15},               // 3 sequences of 5 blocks
		{KV{BlockSize: 16, PerSeq: 64, Seqs: 1}, 4},                                 // the default budget holds one sequence
		{KV{Blocks: 7, BlockSize: 8}, 7},
	} {
		if n, err := c.kv.numBlocks(a.KVModels(), kernels.KVF16); err != nil || n != c.want {
			t.Errorf("%+v: %d blocks, %v; want %d", c.kv, n, err, c.want)
		}
	}
	_, err = KV{Budget: int64(3 * per), BlockSize: 16, PerSeq: 64, Seqs: 1}.numBlocks(a.KVModels(), kernels.KVF16)
	var pe *PoolError
	if !errors.As(err, &pe) || pe.Tokens != 48 || pe.Need != 64 || pe.BlockBytes != per {
		t.Fatalf("a budget of 3 blocks for 4: %v", err)
	}

	d, err := Open(Options{Model: path, Draft: path, Threads: 1}, KV{Budget: int64(10 * per), BlockSize: 16, PerSeq: 64, Seqs: 8},
		engine.Config{MaxSeqs: 8, Spec: engine.Speculation{Method: "draft", Tokens: 2, MaxSeqs: 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Draft == nil || d.BlockBytes != 2*per || d.NumBlocks != 5 || d.KVBytes() != int64(10*per) {
		t.Fatalf("with a draft: %d blocks of %d bytes (want 5 of %d)", d.NumBlocks, d.BlockBytes, 2*per)
	}
}

// TestOpenClose: the engine Open starts answers; after Close it takes no
// request, and a second Close does nothing.
func TestOpenClose(t *testing.T) {
	a, err := Open(Options{Model: tinyGGUF(t, 320), Threads: 1}, KV{Budget: 1 << 20, BlockSize: 16, PerSeq: 64, Seqs: 2}, engine.Config{MaxSeqs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if a.Tokenizer == nil || a.WeightBytes == 0 || a.NumBlocks == 0 {
		t.Fatalf("tokenizer %v, %d weight bytes, %d blocks", a.Tokenizer != nil, a.WeightBytes, a.NumBlocks)
	}
	e := a.Engine
	params := sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: 3}
	ch, err := e.Submit(context.Background(), engine.Request{Prompt: []int32{1, 2, 3}, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev := range ch {
		if ev.Token >= 0 {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no tokens")
	}
	a.Close()
	if a.Engine != nil || a.Model != nil {
		t.Fatal("Close left the engine or the model")
	}
	if _, err := e.Submit(context.Background(), engine.Request{Prompt: []int32{1}, Params: params}); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("the closed engine's Submit: %v", err)
	}
	a.Close()
}

// TestLoadRefusals: a draft of another vocabulary is refused.
func TestLoadRefusals(t *testing.T) {
	path := tinyGGUF(t, 320)
	var de *DraftError
	if _, err := Load(Options{Model: path, Draft: tinyGGUF(t, 321), Threads: 1}); !errors.As(err, &de) || de.Path == "" {
		t.Errorf("a draft of 321 tokens: %v", err)
	}
}

// TestOpenKVType: the pool's block count follows the KV type's bytes (the
// same budget holds 128/68 = 1.88x the blocks as q8_0 and 128/36 = 3.56x
// as q4_0 for heads of 64), the draft's KV too; heads not a multiple of
// 32 are refused for the quantized types, naming both numbers.
func TestOpenKVType(t *testing.T) {
	spec := synth.Spec{Arch: "llama", Dim: 128, Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 64, FFN: 128, VocabSize: 320, Ctx: 1024}
	scheme, err := convert.ParseScheme("Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h64.gguf")
	if err := synth.Write(path, spec, nil, scheme, 11); err != nil {
		t.Fatal(err)
	}
	f16 := 0
	for _, tc := range []struct {
		typ   kernels.KVType
		ratio float64
	}{{kernels.KVF16, 1}, {kernels.KVQ8_0, 128.0 / 68}, {kernels.KVQ4_0, 128.0 / 36}} {
		for _, draft := range []string{"", path} {
			a, err := Open(Options{Model: path, Draft: draft, Threads: 1}, KV{Budget: 1 << 20, BlockSize: 16, PerSeq: 64, Seqs: 1000},
				engine.Config{MaxSeqs: 8, KVType: tc.typ, Spec: engine.Speculation{Method: map[string]string{"": "", path: "draft"}[draft], Tokens: 2, MaxSeqs: 8}})
			if err != nil {
				t.Fatalf("%s draft=%v: %v", tc.typ, draft != "", err)
			}
			per := a.Model.Config.KVBytesPerBlock(16, tc.typ)
			if draft != "" {
				per *= 2
			}
			if a.BlockBytes != per || a.NumBlocks != (1<<20)/per {
				t.Errorf("%s draft=%v: %d blocks of %d bytes, want %d of %d", tc.typ, draft != "", a.NumBlocks, a.BlockBytes, (1<<20)/per, per)
			}
			if draft == "" {
				if tc.typ == kernels.KVF16 {
					f16 = a.NumBlocks
				} else if got := float64(a.NumBlocks) / float64(f16); math.Abs(got-tc.ratio) > 0.01 {
					t.Errorf("%s: %.3fx the f16 pool's blocks, want %.3fx", tc.typ, got, tc.ratio)
				}
			}
			a.Close()
		}
	}
	_, err = Open(Options{Model: tinyGGUF(t, 320), Threads: 1}, KV{Budget: 1 << 20, BlockSize: 16, PerSeq: 64, Seqs: 1},
		engine.Config{MaxSeqs: 1, KVType: kernels.KVQ4_0})
	if err == nil || !strings.Contains(err.Error(), "heads are 16 wide (not a multiple of 32)") {
		t.Fatalf("q4_0 over heads of 16: %v", err)
	}
}
