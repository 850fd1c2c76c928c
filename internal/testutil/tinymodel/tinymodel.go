// Package tinymodel writes and loads the small random-weight models kiln's
// tests run on (no shared files needed): one helper for the engine, runner,
// server and model tests, which each had their own copy. It is a package
// of its own, not part of testutil, because it imports model (through
// convert and synth), and testutil is imported by the internal tests of
// packages below model (gguf, quant), which would then form a cycle.
package tinymodel

import (
	"fmt"
	"path/filepath"
	"testing"

	"kiln/convert"
	"kiln/gguf"
	"kiln/model"
	"kiln/synth"
)

// Spec is the shape most tests share: big enough for GQA, chunked prefill
// and paging to matter, small enough for -race.
var Spec = synth.Spec{Arch: "llama", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 128, VocabSize: 320, Ctx: 1024}

// Write writes spec's model with weights of type typ ("Q8_0", "F32", ...)
// and a synthetic vocabulary, drawn from seed, to path.
func Write(path string, spec synth.Spec, typ string, seed uint64) error {
	scheme, err := convert.ParseScheme(typ)
	if err != nil {
		return fmt.Errorf("tinymodel: %w", err)
	}
	return synth.Write(path, spec, nil, scheme, seed)
}

// File writes the model (see Write) into the test's temporary directory
// and opens it; the file is closed when the test ends.
func File(t testing.TB, spec synth.Spec, typ string, seed uint64) *gguf.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), spec.Arch+"-"+typ+".gguf")
	if err := Write(path, spec, typ, seed); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Model writes, opens and loads the model (see File) with opts (Threads 2
// when opts.Threads is 0); the model is closed when the test ends.
func Model(t testing.TB, spec synth.Spec, typ string, seed uint64, opts model.Options) (*gguf.File, *model.Model) {
	t.Helper()
	f := File(t, spec, typ, seed)
	if opts.Threads == 0 {
		opts.Threads = 2
	}
	m, err := model.Load(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return f, m
}
