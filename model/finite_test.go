package model

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
)

func loadFile(t *testing.T, path string) (*Model, error) {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return Load(f, Options{Threads: 1})
}

// putF32 writes v at element i of F32 tensor data.
func putF32(data []byte, i int, v float32) {
	binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
}

// Load refuses a file whose norms, or whose sampled matrix blocks, are not
// finite, naming the tensor and the likely cause.
func TestLoadRefusesNonFiniteWeights(t *testing.T) {
	src := testutil.SharedModel(t, "stories260K.gguf")
	for _, tc := range []struct {
		tensor string
		patch  func([]byte)
	}{
		{"output_norm.weight", func(b []byte) { putF32(b, 17, float32(math.NaN())) }},
		{"blk.3.ffn_norm.weight", func(b []byte) { putF32(b, 0, float32(math.Inf(-1))) }},
		// A matrix of garbage (here every byte 0xFF: NaN as F32), as a wrong
		// type byte or an overwritten region gives.
		{"blk.2.ffn_down.weight", func(b []byte) {
			for i := range b {
				b[i] = 0xFF
			}
		}},
	} {
		_, err := loadFile(t, testutil.PatchTensor(t, src, tc.tensor, tc.patch))
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), tc.tensor) || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("%s: Load err = %v, want ErrNonFinite naming the tensor and the cause", tc.tensor, err)
		}
	}
}

// Forward fails, instead of returning them, when logits are not finite.
func TestForwardRefusesNonFiniteLogits(t *testing.T) {
	m, err := loadFile(t, testutil.SharedModel(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	norm := append([]float32(nil), m.Weights.OutNorm...)
	norm[3] = float32(math.Inf(1))
	m.Weights.OutNorm = norm
	kv, err := m.NewKVStore(KVStoreOptions{NumBlocks: 1, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	b := &Batch{Tokens: []int32{1, 403}, Positions: []int32{0, 1}, SeqStarts: []int32{0, 2},
		BlockTables: [][]int32{{0}}, ContextLens: []int32{2}, LogitRows: []int32{1}}
	_, err = m.Forward(b, kv)
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "logits at position 1") {
		t.Fatalf("Forward err = %v, want ErrNonFinite at position 1", err)
	}
}
