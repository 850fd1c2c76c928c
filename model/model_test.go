package model_test

import (
	"bufio"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/reference"
	"kiln/internal/testutil"
	"kiln/kernels"
	"kiln/model"
)

// runner feeds one sequence through a model with an identity block table.
type runner struct {
	t     testing.TB
	m     *model.Model
	kv    *model.KVStore
	table []int32
	pos   int
}

func newRunner(t testing.TB, m *model.Model, maxTokens int, f32 bool) *runner {
	return newRunnerBlocks(t, m, maxTokens, 16, f32)
}

func newRunnerBlocks(t testing.TB, m *model.Model, maxTokens, blockSize int, f32 bool) *runner {
	typ := kernels.KVF16
	if f32 {
		typ = kernels.KVF32
	}
	return newRunnerKV(t, m, maxTokens, blockSize, typ)
}

func newRunnerKV(t testing.TB, m *model.Model, maxTokens, blockSize int, typ kernels.KVType) *runner {
	t.Helper()
	n := (maxTokens + blockSize - 1) / blockSize
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: n, BlockSize: blockSize, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{t: t, m: m, kv: kv, table: make([]int32, n)}
	for i := range r.table {
		r.table[i] = int32(i)
	}
	return r
}

// feed runs tokens as one batch and returns a copy of the logits of every row.
func (r *runner) feed(tokens ...int32) [][]float32 {
	r.t.Helper()
	b := &model.Batch{Tokens: tokens, SeqStarts: []int32{0, int32(len(tokens))}, BlockTables: [][]int32{r.table},
		ContextLens: []int32{int32(r.pos + len(tokens))}}
	for i := range tokens {
		b.Positions = append(b.Positions, int32(r.pos+i))
		b.LogitRows = append(b.LogitRows, int32(i))
	}
	logits, err := r.m.Forward(b, r.kv)
	if err != nil {
		r.t.Fatal(err)
	}
	r.pos += len(tokens)
	return split(logits, r.m.Config.Vocab)
}

func split(logits []float32, vocab int) [][]float32 {
	var out [][]float32
	for i := 0; i+vocab <= len(logits); i += vocab {
		out = append(out, append([]float32(nil), logits[i:i+vocab]...))
	}
	return out
}

func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

func openStories(t testing.TB) (*gguf.File, *model.Model) {
	t.Helper()
	f, err := gguf.Open(testutil.SharedModel(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := model.Load(f, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return f, m
}

// readGreedy parses the ids line of stories260K.greedy.txt.
func readGreedy(t *testing.T) []int32 {
	fh, err := os.Open(testutil.SharedModel(t, "stories260K.greedy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		var ids []int32
		for _, f := range strings.Fields(line) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("greedy file: %v", err)
			}
			ids = append(ids, int32(v))
		}
		return ids
	}
	t.Fatal("greedy file has no ids line")
	return nil
}

func TestStories260KGreedy(t *testing.T) {
	_, m := openStories(t)
	want := readGreedy(t)
	r := newRunner(t, m, len(want)+1, false)
	next := argmax(r.feed(1)[0])
	var got []int32
	for len(got) < len(want) {
		got = append(got, next)
		next = argmax(r.feed(next)[0])
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("greedy token %d: got %d, want %d\ngot  %v\nwant %v", i, got[i], want[i], got[:i+1], want[:i+1])
		}
	}
}

// maxLogProbDiff is max |log p - log q| over the reference's 20 most
// probable tokens (the agreement metric).
func maxLogProbDiff(a []float32, b []float64) float64 {
	la := make([]float64, len(a))
	for i, v := range a {
		la[i] = float64(v)
	}
	pa, pb := reference.LogSoftmax(la), reference.LogSoftmax(b)
	idx := make([]int, len(pb))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return pb[idx[i]] > pb[idx[j]] })
	worst := 0.0
	for _, i := range idx[:min(20, len(idx))] {
		worst = math.Max(worst, math.Abs(pa[i]-pb[i]))
	}
	return worst
}

func TestStories260KMatchesReference(t *testing.T) {
	f, m := openStories(t)
	ref, err := reference.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int32{1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410}
	want := ref.Logits(prompt)
	for _, tc := range []struct {
		name string
		f32  bool
		tol  float64
	}{
		// Measured (Intel Xeon family 6 model 207, the same under every kernel set):
		// kv-f32 8.22e-6, so 5e-5; kv-f16 7.12e-3 (the F16 cache rounds
		// keys and values), whose bound 1e-2 is already under 2x.
		{"kv-f32", true, 5e-5}, {"kv-f16", false, 1e-2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, m, len(prompt), tc.f32)
			// Prompt as one batch, then the same positions decoded one at a time.
			got := r.feed(prompt[:10]...)
			for _, tok := range prompt[10:] {
				got = append(got, r.feed(tok)...)
			}
			worst := 0.0
			for p := range prompt {
				d := maxLogProbDiff(got[p], want[p])
				worst = math.Max(worst, d)
				if d > tc.tol {
					t.Errorf("position %d: max |log p - log p_ref| = %.3g > %.g", p, d, tc.tol)
				}
			}
			t.Logf("max |log p - log p_ref| = %.3g", worst)
		})
	}
}

// TestBatchInvariance: a sequence's logits are bit-identical whether it runs
// alone or batched with others, with blocks scattered across the cache.
func TestBatchInvariance(t *testing.T) {
	_, m := openStories(t)
	vocab := m.Config.Vocab
	seqs := [][]int32{
		{1, 403, 407, 261, 378, 432, 383},
		{1, 300, 301, 302},
		{1, 410, 411, 412, 413, 414, 415, 416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427},
	}
	const bs = 4 // the same page size in both runs: attention visits keys a page at a time
	// Alone: identity block tables in a private cache.
	var alone [][][]float32
	for _, s := range seqs {
		r := newRunnerBlocks(t, m, len(s), bs, false)
		alone = append(alone, r.feed(s...))
	}
	// Together: one cache, block tables interleaved and reversed.
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: 16, BlockSize: bs})
	if err != nil {
		t.Fatal(err)
	}
	tables := [][]int32{{15, 2, 9}, {7}, {0, 14, 3, 11, 5}}
	b := &model.Batch{SeqStarts: []int32{0}}
	for i, s := range seqs {
		for p, tok := range s {
			b.LogitRows = append(b.LogitRows, int32(len(b.Tokens)))
			b.Tokens = append(b.Tokens, tok)
			b.Positions = append(b.Positions, int32(p))
		}
		b.SeqStarts = append(b.SeqStarts, int32(len(b.Tokens)))
		b.BlockTables = append(b.BlockTables, tables[i])
		b.ContextLens = append(b.ContextLens, int32(len(s)))
	}
	logits, err := m.Forward(b, kv)
	if err != nil {
		t.Fatal(err)
	}
	rows := split(logits, vocab)
	row := 0
	for i, s := range seqs {
		for p := range s {
			for v := 0; v < vocab; v++ {
				if rows[row][v] != alone[i][p][v] {
					t.Fatalf("sequence %d position %d token %d: batched logit %v != alone %v", i, p, v, rows[row][v], alone[i][p][v])
				}
			}
			row++
		}
	}
}

func TestForwardRejectsBadBatches(t *testing.T) {
	_, m := openStories(t)
	kv, err := m.NewKVStore(model.KVStoreOptions{NumBlocks: 2, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	ok := func() *model.Batch {
		return &model.Batch{Tokens: []int32{1, 2}, Positions: []int32{0, 1}, SeqStarts: []int32{0, 2},
			BlockTables: [][]int32{{0}}, ContextLens: []int32{2}, LogitRows: []int32{1}}
	}
	if _, err := m.Forward(ok(), kv); err != nil {
		t.Fatalf("valid batch rejected: %v", err)
	}
	cases := map[string]func(b *model.Batch){
		"empty":             func(b *model.Batch) { b.Tokens, b.Positions = nil, nil },
		"token past vocab":  func(b *model.Batch) { b.Tokens[1] = 512 },
		"negative token":    func(b *model.Batch) { b.Tokens[0] = -1 },
		"positions short":   func(b *model.Batch) { b.Positions = b.Positions[:1] },
		"bad seqstarts":     func(b *model.Batch) { b.SeqStarts = []int32{0, 1} },
		"gap in positions":  func(b *model.Batch) { b.Positions = []int32{0, 2}; b.ContextLens[0] = 3 },
		"context mismatch":  func(b *model.Batch) { b.ContextLens[0] = 5 },
		"block out of pool": func(b *model.Batch) { b.BlockTables[0][0] = 7 },
		"table too short":   func(b *model.Batch) { b.Positions = []int32{4, 5}; b.ContextLens[0] = 6 },
		"logit row range":   func(b *model.Batch) { b.LogitRows = []int32{2} },
		"past context":      func(b *model.Batch) { b.Positions = []int32{600, 601}; b.ContextLens[0] = 602 },
	}
	for name, mutate := range cases {
		b := ok()
		mutate(b)
		if _, err := m.Forward(b, kv); err == nil {
			t.Errorf("%s: Forward accepted a bad batch", name)
		} else if !strings.HasPrefix(err.Error(), "model: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
}
