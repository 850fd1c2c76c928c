package convert

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/quant"
)

// writeModel writes a small llama-style F32 model (dim 256, 3 layers) with
// deterministic values and returns its path.
func writeModel(t *testing.T, dir string, typ gguf.Type) string {
	t.Helper()
	w := gguf.NewWriter()
	w.Add("general.architecture", gguf.StringValue("llama"))
	w.Add("llama.block_count", gguf.Uint32Value(3))
	w.Add("llama.attention.head_count", gguf.Uint32Value(4))
	w.Add("llama.attention.head_count_kv", gguf.Uint32Value(2))
	w.Add("general.file_type", gguf.Uint32Value(0))
	w.Add("split.count", gguf.Uint16Value(1))
	w.Add("tokenizer.ggml.model", gguf.StringValue("llama"))
	x := uint32(1)
	for _, ti := range llamaTensors(3, 256, 256, false) {
		vals := make([]float32, ti.Elements())
		for i := range vals {
			x = x*1664525 + 1013904223
			vals[i] = float32(int32(x)>>8) / (1 << 23)
		}
		tt := typ
		if len(ti.Shape) == 1 {
			tt = gguf.TypeF32
		}
		n, _ := tt.RowBytes(len(vals))
		data := make([]byte, n)
		if err := quant.Quantize(tt, vals, data); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(ti.Name, tt, ti.Shape, data); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "in-"+typ.String()+".gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConvert(t *testing.T) {
	dir := t.TempDir()
	in := writeModel(t, dir, gguf.TypeF32)
	src, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, name := range []string{"Q8_0", "Q4_K_M", "Q6_K", "F16", "BF16", "Q4_0", "Q5_1"} {
		t.Run(name, func(t *testing.T) {
			ft, err := ParseFileType(name)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, name+".gguf")
			rep, err := Convert(in, out, Options{Scheme: Scheme{FileType: ft}})
			if err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got, _ := f.Uint("general.file_type"); got != uint64(ft) {
				t.Errorf("general.file_type = %d, want %d", got, ft)
			}
			if got, _ := f.Uint("general.quantization_version"); got != 2 {
				t.Errorf("general.quantization_version = %d", got)
			}
			if _, ok := f.Value("split.count"); ok {
				t.Error("split.count copied")
			}
			for _, kv := range src.KV {
				if kv.Key == "general.file_type" || kv.Key == "split.count" {
					continue
				}
				if v, ok := f.Value(kv.Key); !ok || !v.Equal(kv.Value) {
					t.Errorf("metadata %s not copied", kv.Key)
				}
			}
			if len(f.Tensors) != len(src.Tensors) || len(rep.Tensors) != len(f.Tensors) {
				t.Fatalf("%d tensors written, %d read, %d reported", len(f.Tensors), len(src.Tensors), len(rep.Tensors))
			}
			for i, tr := range rep.Tensors {
				got := &f.Tensors[i]
				in, _ := src.Tensor(tr.Name)
				if got.Name != tr.Name || got.Type != tr.To || fmt.Sprint(got.Shape) != fmt.Sprint(in.Shape) || got.Size != tr.Bytes {
					t.Fatalf("tensor %d: %s %s %v, reported %s %s", i, got.Name, got.Type, got.Shape, tr.Name, tr.To)
				}
				// The converted bytes are exactly quant's encoding of the input values.
				vals := make([]float32, in.Elements())
				if err := quant.Dequantize(in.Type, src.Data(in), vals); err != nil {
					t.Fatal(err)
				}
				want := make([]byte, got.Size)
				if err := quant.Quantize(got.Type, vals, want); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(f.Data(got), want) {
					t.Fatalf("%s: data differs from quant.Quantize(%s) of the input", got.Name, got.Type)
				}
			}
			// llama.cpp's order: non-block tensors first, then blocks by number.
			if f.Tensors[0].Name != "output.weight" || !strings.HasPrefix(f.Tensors[len(f.Tensors)-1].Name, "blk.2.") {
				t.Errorf("order: first %s, last %s", f.Tensors[0].Name, f.Tensors[len(f.Tensors)-1].Name)
			}
		})
	}
}

func TestConvertRequantize(t *testing.T) {
	dir := t.TempDir()
	in := writeModel(t, dir, gguf.TypeQ8_0)
	out := filepath.Join(dir, "out.gguf")
	opts := Options{Scheme: Scheme{FileType: FileTypeQ4_0}}
	if _, err := Convert(in, out, opts); err == nil || !strings.Contains(err.Error(), "allow-requantize") {
		t.Fatalf("requantizing Q8_0 without permission: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed conversion left an output file")
	}
	opts.AllowRequantize = true
	if _, err := Convert(in, out, opts); err != nil {
		t.Fatal(err)
	}
	// Same type: copied byte for byte, no permission needed.
	same := filepath.Join(dir, "same.gguf")
	if _, err := Convert(in, same, Options{Scheme: Scheme{FileType: FileTypeQ8_0, Pure: true}}); err != nil {
		t.Fatal(err)
	}
	a, _ := gguf.Open(in)
	b, _ := gguf.Open(same)
	defer a.Close()
	defer b.Close()
	for i := range b.Tensors {
		ta, _ := a.Tensor(b.Tensors[i].Name)
		if !bytes.Equal(a.Data(ta), b.Data(&b.Tensors[i])) {
			t.Errorf("%s changed", ta.Name)
		}
	}
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Convert(filepath.Join(dir, "missing.gguf"), filepath.Join(dir, "o.gguf"), Options{Scheme: Scheme{FileType: FileTypeQ8_0}}); err == nil {
		t.Error("missing input accepted")
	}
	// A vocab-only file has no block_count.
	w := gguf.NewWriter()
	w.Add("general.architecture", gguf.StringValue("llama"))
	p := filepath.Join(dir, "vocab.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(p, filepath.Join(dir, "o.gguf"), Options{Scheme: Scheme{FileType: FileTypeQ8_0}}); err == nil || !strings.Contains(err.Error(), "block_count") {
		t.Errorf("vocab-only input: %v", err)
	}
}
