package assemble

import (
	"path/filepath"
	"testing"

	"kiln/convert"
	"kiln/synth"
)

// TestPoolingType reads {arch}.pooling_type where the GGUF has it and
// reports its absence otherwise.
func TestPoolingType(t *testing.T) {
	scheme, err := convert.ParseScheme("Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{0, 1, 3} {
		spec := synth.Spec{Arch: "qwen3", Dim: 64, Layers: 1, Heads: 4, KVHeads: 2, FFN: 128, VocabSize: 320, Ctx: 256, PoolingType: want}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := synth.Write(path, spec, nil, scheme, 11); err != nil {
			t.Fatal(err)
		}
		a, err := Load(Options{Model: path, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := a.PoolingType()
		a.Close()
		if ok != (want > 0) || got != want {
			t.Errorf("pooling_type %d written: read %d, %v", want, got, ok)
		}
	}
}
