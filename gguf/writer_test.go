package gguf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln/gguf"
)

// allValues is one metadata entry of every value type, arrays of every
// element type, and nested arrays (empty ones included).
func allValues() []gguf.KV {
	arr := gguf.ArrayValue
	return []gguf.KV{
		{"general.architecture", gguf.StringValue("llama")},
		{"u8", gguf.Uint8Value(255)},
		{"i8", gguf.Int8Value(-128)},
		{"u16", gguf.Uint16Value(65535)},
		{"i16", gguf.Int16Value(-32768)},
		{"u32", gguf.Uint32Value(math.MaxUint32)},
		{"i32", gguf.Int32Value(math.MinInt32)},
		{"f32", gguf.Float32Value(1e-5)},
		{"f32.nan", gguf.Float32Value(float32(math.NaN()))},
		{"bool", gguf.BoolValue(true)},
		{"string", gguf.StringValue("héllo\x00world")},
		{"string.empty", gguf.StringValue("")},
		{"u64", gguf.Uint64Value(math.MaxUint64)},
		{"i64", gguf.Int64Value(math.MinInt64)},
		{"f64", gguf.Float64Value(math.Pi)},
		{"arr.u8", arr(gguf.TypeUint8, []gguf.Value{gguf.Uint8Value(1), gguf.Uint8Value(2)})},
		{"arr.i8", arr(gguf.TypeInt8, []gguf.Value{gguf.Int8Value(-1)})},
		{"arr.u16", arr(gguf.TypeUint16, []gguf.Value{gguf.Uint16Value(9)})},
		{"arr.i16", arr(gguf.TypeInt16, []gguf.Value{gguf.Int16Value(-9)})},
		{"arr.u32", gguf.Uint32sValue([]uint32{0, math.MaxUint32})},
		{"arr.i32", gguf.Int32sValue([]int32{-1, 0, 1})},
		{"arr.f32", gguf.Float32sValue([]float32{0.5, float32(math.Inf(-1))})},
		{"arr.bool", arr(gguf.TypeBool, []gguf.Value{gguf.BoolValue(true), gguf.BoolValue(false)})},
		{"arr.string", gguf.StringsValue([]string{"<s>", "", "▁the"})},
		{"arr.u64", arr(gguf.TypeUint64, []gguf.Value{gguf.Uint64Value(1 << 60)})},
		{"arr.i64", arr(gguf.TypeInt64, []gguf.Value{gguf.Int64Value(-1 << 60)})},
		{"arr.f64", arr(gguf.TypeFloat64, []gguf.Value{gguf.Float64Value(-0.0)})},
		{"arr.empty", gguf.Int32sValue(nil)},
		{"arr.nested", arr(gguf.TypeArray, []gguf.Value{
			gguf.Int32sValue([]int32{1, 2}),
			gguf.StringsValue([]string{"a"}),
			arr(gguf.TypeArray, []gguf.Value{gguf.Float32sValue([]float32{3}), arr(gguf.TypeArray, nil)}),
			gguf.Int32sValue(nil),
		})},
	}
}

type testTensor struct {
	name  string
	typ   gguf.Type
	shape []uint64
	data  []byte
}

// testTensors are tensors of several types with random bytes: the reader
// and writer move bytes, they never interpret them.
func testTensors(seed uint64) []testTensor {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []testTensor
	for _, tc := range []struct {
		name  string
		typ   gguf.Type
		shape []uint64
	}{
		{"token_embd.weight", gguf.TypeQ8_0, []uint64{64, 5}},
		{"blk.0.attn_norm.weight", gguf.TypeF32, []uint64{7}},
		{"blk.0.attn_q.weight", gguf.TypeQ4_K, []uint64{256, 2}},
		{"blk.0.ffn_down.weight", gguf.TypeQ6_K, []uint64{256, 1, 1}},
		{"blk.0.ffn_up.weight", gguf.TypeF16, []uint64{3, 2, 2, 1}},
		{"blk.0.ffn_gate.weight", gguf.TypeBF16, []uint64{1}},
		{"output.weight", gguf.TypeQ4_0, []uint64{32, 3}},
		{"empty", gguf.TypeF32, []uint64{0, 4}},
	} {
		n := uint64(1)
		for _, d := range tc.shape {
			n *= d
		}
		data := make([]byte, n/uint64(tc.typ.BlockSize())*uint64(tc.typ.BlockBytes()))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		out = append(out, testTensor{tc.name, tc.typ, tc.shape, data})
	}
	return out
}

func writeAll(t *testing.T, w *gguf.Writer) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint64{0, 1, 8, 64, 4096} { // 0: the default, 32
		kvs, tensors := allValues(), testTensors(align)
		w := gguf.NewWriter()
		if align != 0 {
			w.SetAlignment(align)
		}
		for _, kv := range kvs {
			w.Add(kv.Key, kv.Value)
		}
		for _, tt := range tensors {
			if err := w.AddTensor(tt.name, tt.typ, tt.shape, tt.data); err != nil {
				t.Fatal(err)
			}
		}
		img := writeAll(t, w)
		f, err := gguf.Parse(img)
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		wantAlign := align
		if align == 0 {
			wantAlign = 32
		} else {
			kvs = append([]gguf.KV{{"general.alignment", gguf.Uint32Value(uint32(align))}}, kvs...)
		}
		if f.Version != 3 || f.Alignment != wantAlign || f.DataOffset%wantAlign != 0 {
			t.Errorf("align %d: version %d alignment %d data offset %d", align, f.Version, f.Alignment, f.DataOffset)
		}
		if len(f.KV) != len(kvs) {
			t.Fatalf("align %d: %d keys, want %d", align, len(f.KV), len(kvs))
		}
		for i, kv := range kvs {
			if f.KV[i].Key != kv.Key || !f.KV[i].Value.Equal(kv.Value) {
				t.Errorf("key %d: %s = %v, want %s = %v", i, f.KV[i].Key, f.KV[i].Value, kv.Key, kv.Value)
			}
		}
		if len(f.Tensors) != len(tensors) {
			t.Fatalf("%d tensors, want %d", len(f.Tensors), len(tensors))
		}
		next := uint64(0)
		for i, tt := range tensors {
			ti := &f.Tensors[i]
			if ti.Name != tt.name || ti.Type != tt.typ || !equalShape(ti.Shape, tt.shape) {
				t.Errorf("tensor %d: %s %v %v, want %s %v %v", i, ti.Name, ti.Type, ti.Shape, tt.name, tt.typ, tt.shape)
			}
			if ti.Offset != next {
				t.Errorf("tensor %s at %d, want %d (llama.cpp needs consecutive offsets)", ti.Name, ti.Offset, next)
			}
			next += (ti.Size + wantAlign - 1) / wantAlign * wantAlign
			if !bytes.Equal(f.Data(ti), tt.data) {
				t.Errorf("tensor %s: data differs", ti.Name)
			}
		}
		if end := f.DataOffset + next; end != uint64(len(img)) {
			t.Errorf("file is %d bytes, want %d (last tensor padded too)", len(img), end)
		}
		// Writing the parsed file again reproduces it byte for byte.
		if again := writeAll(t, rewrite(t, f)); !bytes.Equal(again, img) {
			t.Errorf("align %d: rewriting the parsed file changed it", align)
		}
	}
}

// rewrite copies f's metadata and tensors into a new Writer.
func rewrite(t testing.TB, f *gguf.File) *gguf.Writer {
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		w.Add(kv.Key, kv.Value)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, f.Data(ti)); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// TestGoldenBytes pins the encoding against the spec by hand, independently
// of the reader.
func TestGoldenBytes(t *testing.T) {
	w := gguf.NewWriter()
	w.SetAlignment(8)
	w.Add("k", gguf.Int32sValue([]int32{-2}))
	if err := w.AddTensor("t", gguf.TypeF16, []uint64{3}, []byte{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	var want []byte
	want = append(want, "GGUF"...)
	want = le.AppendUint32(want, 3)  // version
	want = le.AppendUint64(want, 1)  // tensors
	want = le.AppendUint64(want, 2)  // keys
	want = le.AppendUint64(want, 17) // "general.alignment"
	want = append(want, "general.alignment"...)
	want = le.AppendUint32(want, 4) // uint32
	want = le.AppendUint32(want, 8)
	want = le.AppendUint64(want, 1)
	want = append(want, 'k')
	want = le.AppendUint32(want, 9) // array
	want = le.AppendUint32(want, 5) // of int32
	want = le.AppendUint64(want, 1)
	want = le.AppendUint32(want, math.MaxUint32-1) // -2
	want = le.AppendUint64(want, 1)
	want = append(want, 't')
	want = le.AppendUint32(want, 1) // n_dims
	want = le.AppendUint64(want, 3)
	want = le.AppendUint32(want, 1) // F16
	want = le.AppendUint64(want, 0) // offset
	for len(want)%8 != 0 {
		want = append(want, 0)
	}
	want = append(want, 1, 2, 3, 4, 5, 6, 0, 0)
	if got := writeAll(t, w); !bytes.Equal(got, want) {
		t.Errorf("encoding differs:\n got %x\nwant %x", got, want)
	}
}

func TestWriterReplacesDuplicateKey(t *testing.T) {
	w := gguf.NewWriter()
	w.Add("a", gguf.Uint32Value(1))
	w.Add("b", gguf.Uint32Value(2))
	w.Add("a", gguf.StringValue("three"))
	f, err := gguf.Parse(writeAll(t, w))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.KV) != 2 || f.KV[0].Key != "a" || f.KV[1].Key != "b" {
		t.Fatalf("keys %v", f.KV)
	}
	if s, _ := f.String("a"); s != "three" {
		t.Errorf("a = %q, want three", s)
	}
}

func TestWriterMetadataErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(w *gguf.Writer)
		want string
	}{
		{"empty key", func(w *gguf.Writer) { w.Add("", gguf.Uint8Value(1)) }, "key is empty"},
		{"alignment 0", func(w *gguf.Writer) { w.SetAlignment(0) }, "power of two"},
		{"alignment 48", func(w *gguf.Writer) { w.SetAlignment(48) }, "power of two"},
		{"alignment 2^32", func(w *gguf.Writer) { w.SetAlignment(1 << 32) }, "power of two"},
		{"alignment key as uint64", func(w *gguf.Writer) { w.Add("general.alignment", gguf.Uint64Value(32)) }, "uint32 power of two"},
		{"alignment key 3", func(w *gguf.Writer) { w.Add("general.alignment", gguf.Uint32Value(3)) }, "uint32 power of two"},
		{"mismatched array", func(w *gguf.Writer) {
			w.Add("x", gguf.ArrayValue(gguf.TypeInt32, []gguf.Value{gguf.StringValue("no")}))
		}, `"x": gguf: array of int32 has element 0 of type string`},
		{"invalid element type", func(w *gguf.Writer) { w.Add("x", gguf.ArrayValue(42, nil)) }, "element type 42"},
		{"too deep", func(w *gguf.Writer) {
			v := gguf.Int32sValue(nil)
			for range 8 {
				v = gguf.ArrayValue(gguf.TypeArray, []gguf.Value{v})
			}
			w.Add("deep", v)
		}, "nested more than 8 deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := gguf.NewWriter()
			w.Add("ok", gguf.Uint8Value(1))
			tc.do(w)
			w.Add("later", gguf.Uint8Value(2)) // the first error sticks
			_, err := w.WriteTo(io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || w.Err() != err {
				t.Fatalf("WriteTo error %v (Err %v), want one containing %q", err, w.Err(), tc.want)
			}
			if err := w.WriteFile(filepath.Join(t.TempDir(), "x.gguf")); err == nil {
				t.Error("WriteFile succeeded despite the recorded error")
			}
		})
	}
}

func TestWriterTensorErrors(t *testing.T) {
	long := strings.Repeat("x", 64)
	for _, tc := range []struct {
		name  string
		tname string
		typ   gguf.Type
		shape []uint64
		data  []byte
		want  string
	}{
		{"empty name", "", gguf.TypeF32, []uint64{1}, make([]byte, 4), "name is empty"},
		{"long name", long, gguf.TypeF32, []uint64{1}, make([]byte, 4), "at most 63"},
		{"duplicate", "dup", gguf.TypeF32, []uint64{1}, make([]byte, 4), "added twice"},
		{"unknown type", "t", gguf.Type(4), []uint64{1}, nil, "unknown ggml tensor type 4"},
		{"no dims", "t", gguf.TypeF32, nil, nil, "0 dimensions"},
		{"five dims", "t", gguf.TypeF32, []uint64{1, 1, 1, 1, 1}, make([]byte, 4), "5 dimensions"},
		{"partial block", "t", gguf.TypeQ4_0, []uint64{33}, make([]byte, 18), "not a multiple of Q4_0's block size 32"},
		{"short data", "t", gguf.TypeF32, []uint64{2}, make([]byte, 7), "7 bytes of data, but F32 [2] needs 8"},
		{"dim too big", "t", gguf.TypeI8, []uint64{1 << 63}, nil, "more than 2^63-1"},
		{"element overflow", "t", gguf.TypeI8, []uint64{1 << 32, 1 << 32}, nil, "2^63 or more elements"},
		{"byte overflow", "t", gguf.TypeF64, []uint64{1 << 61}, nil, "2^63 bytes or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := gguf.NewWriter()
			if err := w.AddTensor("dup", gguf.TypeF32, []uint64{1}, make([]byte, 4)); err != nil {
				t.Fatal(err)
			}
			err := w.AddTensor(tc.tname, tc.typ, tc.shape, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gguf: ") {
				t.Fatalf("AddTensor error %v, want one containing %q", err, tc.want)
			}
			// A rejected tensor leaves the writer usable.
			f, err := gguf.Parse(writeAll(t, w))
			if err != nil || len(f.Tensors) != 1 {
				t.Fatalf("after the rejected tensor: %v, %d tensors", err, len(f.Tensors))
			}
			if tc.name == "short data" {
				return // AddTensorFunc has no data to check up front
			}
			err = w.AddTensorFunc(tc.tname, tc.typ, tc.shape, func(io.Writer) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("AddTensorFunc error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if err := gguf.NewWriter().AddTensorFunc("t", gguf.TypeF32, []uint64{1}, nil); err == nil {
		t.Error("AddTensorFunc accepted a nil function")
	}
}

func TestAddTensorFunc(t *testing.T) {
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	// Streamed in odd-sized pieces, the result equals AddTensor's.
	ws := gguf.NewWriter()
	err := ws.AddTensorFunc("x", gguf.TypeF32, []uint64{3}, func(w io.Writer) error {
		for _, piece := range [][]byte{data[:5], data[5:6], data[6:]} {
			if _, err := w.Write(piece); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wd := gguf.NewWriter()
	if err := wd.AddTensor("x", gguf.TypeF32, []uint64{3}, data); err != nil {
		t.Fatal(err)
	}
	if a, b := writeAll(t, ws), writeAll(t, wd); !bytes.Equal(a, b) {
		t.Error("AddTensorFunc output differs from AddTensor's")
	}

	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		write func(io.Writer) error
		want  string
	}{
		{"short", func(w io.Writer) error { _, err := w.Write(data[:11]); return err }, "produced 11 bytes, its type and shape need 12"},
		{"long", func(w io.Writer) error { _, err := w.Write(append(data, 0)); return err }, "more than the 12 bytes"},
		{"long, error ignored", func(w io.Writer) error { w.Write(data); w.Write(data); return nil }, "more than the 12 bytes"},
		{"failing", func(io.Writer) error { return boom }, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := gguf.NewWriter()
			if err := w.AddTensorFunc("x", gguf.TypeF32, []uint64{3}, tc.write); err != nil {
				t.Fatal(err)
			}
			_, err := w.WriteTo(io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"x"`) {
				t.Fatalf("WriteTo error %v, want one naming \"x\" and containing %q", err, tc.want)
			}
			if tc.name == "failing" && !errors.Is(err, boom) {
				t.Errorf("error %v does not wrap the write function's error", err)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(path, []byte("old contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	w.Add("general.architecture", gguf.StringValue("llama"))
	tt := testTensors(7)[0]
	if err := w.AddTensor(tt.name, tt.typ, tt.shape, tt.data); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Architecture() != "llama" || !bytes.Equal(f.Data(&f.Tensors[0]), tt.data) {
		t.Errorf("reopened file differs: %q", f.Architecture())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Data(&f.Tensors[0]) != nil {
		t.Error("Data after Close returned bytes")
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, ok := f.String("general.architecture"); !ok {
		t.Error("metadata lost after Close")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only m.gguf (temp file left behind?)", len(entries))
	}
	if err := w.WriteFile(filepath.Join(dir, "missing", "m.gguf")); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
	// A failing tensor leaves no file and no temp file behind.
	bad := gguf.NewWriter()
	bad.AddTensorFunc("x", gguf.TypeF32, []uint64{1}, func(io.Writer) error { return errors.New("boom") })
	if err := bad.WriteFile(filepath.Join(dir, "bad.gguf")); err == nil {
		t.Error("WriteFile with a failing tensor succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("after a failed WriteFile the directory holds %d entries", len(entries))
	}
}
