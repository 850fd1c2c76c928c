package gguf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"kiln/gguf"
)

var update = flag.Bool("update", false, "rewrite the generated fuzz seeds under testdata/fuzz/FuzzParse")

// seeds are the generated members of FuzzParse's seed corpus: small files
// made with the Writer. (The directory also holds inputs the fuzzer found.)
func seeds(t testing.TB) map[string][]byte {
	out := map[string][]byte{"gen-small": smallFile(t)}

	w := gguf.NewWriter()
	for _, kv := range allValues() {
		w.Add(kv.Key, kv.Value)
	}
	for _, tt := range testTensors(1)[1:3] {
		if err := w.AddTensor(tt.name, tt.typ, tt.shape, tt.data); err != nil {
			t.Fatal(err)
		}
	}
	out["gen-all-values"] = writeBytes(t, w)

	w = gguf.NewWriter()
	w.Add("general.architecture", gguf.StringValue("llama"))
	out["gen-no-tensors"] = writeBytes(t, w)

	w = gguf.NewWriter()
	w.SetAlignment(1)
	w.Add("tokenizer.ggml.tokens", gguf.StringsValue([]string{"<unk>", "<s>", "▁the"}))
	w.Add("tokenizer.ggml.token_type", gguf.Int32sValue([]int32{2, 3, 1}))
	if err := w.AddTensor("w", gguf.TypeI8, []uint64{3}, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("z", gguf.TypeF16, []uint64{0}, nil); err != nil {
		t.Fatal(err)
	}
	v2 := writeBytes(t, w)
	binary.LittleEndian.PutUint32(v2[4:], 2)
	out["gen-v2-align1"] = v2
	return out
}

func writeBytes(t testing.TB, w *gguf.Writer) []byte {
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// corpusFile is the `go test fuzz v1` encoding of one []byte input.
func corpusFile(b []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
}

// TestFuzzSeeds keeps the committed seeds equal to what the generators
// make; run with -update after changing them.
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	for name, b := range seeds(t) {
		path := filepath.Join(dir, name)
		want := corpusFile(b)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale or missing (%v); run go test ./gguf -run TestFuzzSeeds -update", path, err)
		}
		if _, err := gguf.Parse(b); err != nil {
			t.Errorf("seed %s does not parse: %v", name, err)
		}
	}
}

// FuzzParse feeds arbitrary bytes to Parse. It must never panic; every
// error is a FormatError; and whatever parses must satisfy the File's
// invariants and survive a Writer round trip unchanged.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := gguf.Parse(data)
		if err != nil {
			var fe *gguf.FormatError
			if !errors.As(err, &fe) || fe.Kind == nil {
				t.Fatalf("error %v is not a categorised FormatError", err)
			}
			return
		}
		checkFile(t, g)
		again, err := gguf.Parse(writeBytes(t, rewrite(t, g)))
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
		if len(again.KV) != len(g.KV) || len(again.Tensors) != len(g.Tensors) {
			t.Fatalf("round trip: %d keys %d tensors, was %d %d", len(again.KV), len(again.Tensors), len(g.KV), len(g.Tensors))
		}
		for i, kv := range g.KV {
			if again.KV[i].Key != kv.Key || !again.KV[i].Value.Equal(kv.Value) {
				t.Fatalf("round trip changed key %d: %s=%v, was %s=%v", i, again.KV[i].Key, again.KV[i].Value, kv.Key, kv.Value)
			}
		}
		for i := range g.Tensors {
			a, b := &again.Tensors[i], &g.Tensors[i]
			if a.Name != b.Name || a.Type != b.Type || !equalShape(a.Shape, b.Shape) || !bytes.Equal(again.Data(a), g.Data(b)) {
				t.Fatalf("round trip changed tensor %d: %+v, was %+v", i, a, b)
			}
		}
	})
}

// checkFile checks what Parse promises about a File it returns.
func checkFile(t *testing.T, g *gguf.File) {
	t.Helper()
	if g.Alignment == 0 || g.Alignment&(g.Alignment-1) != 0 {
		t.Fatalf("alignment %d", g.Alignment)
	}
	for _, kv := range g.KV {
		if v, ok := g.Value(kv.Key); !ok || !v.Equal(kv.Value) {
			t.Fatalf("Value(%q) does not find its entry", kv.Key)
		}
		_ = fmt.Sprint(kv.Value)
	}
	for i := range g.Tensors {
		ti := &g.Tensors[i]
		if len(ti.Shape) < 1 || len(ti.Shape) > 4 || !ti.Type.Known() {
			t.Fatalf("tensor %q: shape %v type %v", ti.Name, ti.Shape, ti.Type)
		}
		want := ti.Elements() / uint64(ti.Type.BlockSize()) * uint64(ti.Type.BlockBytes())
		if ti.Size != want || uint64(len(g.Data(ti))) != ti.Size || ti.Offset%g.Alignment != 0 {
			t.Fatalf("tensor %q: size %d (want %d), data %d bytes, offset %d", ti.Name, ti.Size, want, len(g.Data(ti)), ti.Offset)
		}
		if got, ok := g.Tensor(ti.Name); !ok || got != ti {
			t.Fatalf("Tensor(%q) does not find its entry", ti.Name)
		}
	}
}
