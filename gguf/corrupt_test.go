package gguf_test

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln/gguf"
)

// img builds GGUF images byte by byte, for inputs the Writer refuses to make.
type img []byte

func (b img) u32(x uint32) img { return binary.LittleEndian.AppendUint32(b, x) }
func (b img) u64(x uint64) img { return binary.LittleEndian.AppendUint64(b, x) }
func (b img) str(s string) img { return append(b.u64(uint64(len(s))), s...) }

// header starts an image: magic, version 3, counts.
func header(nTensors, nKV uint64) img { return img("GGUF").u32(3).u64(nTensors).u64(nKV) }

// kvU32 appends a uint32 metadata entry.
func (b img) kvU32(key string, x uint32) img { return b.str(key).u32(uint32(gguf.TypeUint32)).u32(x) }

// tensor appends a directory entry.
func (b img) tensor(name string, typ gguf.Type, offset uint64, shape ...uint64) img {
	b = b.str(name).u32(uint32(len(shape)))
	for _, d := range shape {
		b = b.u64(d)
	}
	return b.u32(uint32(typ)).u64(offset)
}

// data pads to 32 and appends n bytes of tensor data.
func (b img) data(n int) img {
	for len(b)%32 != 0 {
		b = append(b, 0)
	}
	return append(b, make([]byte, n)...)
}

func TestCorruptHeaders(t *testing.T) {
	// A value of type array, then eight arrays each holding one array: the
	// innermost array is at depth 9.
	nested := header(0, 1).str("deep").u32(uint32(gguf.TypeArray))
	for range 8 {
		nested = nested.u32(uint32(gguf.TypeArray)).u64(1)
	}
	nested = nested.u32(uint32(gguf.TypeUint8)).u64(0)

	f32 := gguf.TypeF32
	for _, tc := range []struct {
		name string
		b    img
		kind error
		want string
	}{
		{"empty", img{}, gguf.ErrTruncated, "0 bytes is too short"},
		{"three bytes", img("GGU"), gguf.ErrTruncated, "too short"},
		{"bad magic", img("GGML").u32(3).u64(0).u64(0), gguf.ErrNotGGUF, `magic is "GGML"`},
		{"ggjt", img("tjgg").u32(3).u64(0).u64(0), gguf.ErrUnsupported, "pre-GGUF"},
		{"no version", img("GGUF").u32(3)[:6], gguf.ErrTruncated, "version"},
		{"version 0", img("GGUF").u32(0).u64(0).u64(0), gguf.ErrInvalid, "version 0"},
		{"version 1", img("GGUF").u32(1).u64(0).u64(0), gguf.ErrUnsupported, "version 1 is no longer supported"},
		{"version 4", img("GGUF").u32(4).u64(0).u64(0), gguf.ErrUnsupported, "version 4 is newer"},
		{"corrupt version", img("GGUF").u32(0x5a3c1207).u64(0).u64(0), gguf.ErrInvalid, "no GGUF version (2 and 3 exist): the file is likely corrupt"},
		{"big-endian", img("GGUF").u32(3 << 24).u64(0).u64(0), gguf.ErrUnsupported, "big-endian"},
		{"no counts", img("GGUF").u32(3).u64(0), gguf.ErrTruncated, "metadata count"},
		{"huge kv count", header(0, 1<<62), gguf.ErrTruncated, "4611686018427387904 metadata entries"},
		{"huge tensor count", header(math.MaxUint64, 0), gguf.ErrTruncated, "18446744073709551615 tensors"},
		{"kv cut", header(0, 2).kvU32("a", 1).kvU32("b", 2)[:24+2*17-2], gguf.ErrTruncated, `metadata key "b": file ends inside uint32 value: need 4 bytes, 2 left`},
		{"empty key", header(0, 1).kvU32("", 1), gguf.ErrInvalid, "metadata key #0 is empty"},
		{"duplicate key", header(0, 2).kvU32("a", 1).kvU32("a", 2), gguf.ErrInvalid, `metadata key "a": appears twice`},
		{"value type 13", header(0, 1).str("k").u32(13).u64(0), gguf.ErrInvalid, `"k": value type 13`},
		{"array elem type 13", header(0, 1).str("k").u32(9).u32(13).u64(0), gguf.ErrInvalid, "array element type 13"},
		{"array count huge", header(0, 1).str("k").u32(9).u32(uint32(gguf.TypeUint32)).u64(1 << 61), gguf.ErrTruncated, "array of 2305843009213693952 uint32 elements"},
		{"string array count huge", header(0, 1).str("k").u32(9).u32(uint32(gguf.TypeString)).u64(3).u64(0).u64(0), gguf.ErrTruncated, "array of 3 string"},
		{"string element too long", header(0, 1).str("k").u32(9).u32(uint32(gguf.TypeString)).u64(2).str("a").u64(100).u64(0), gguf.ErrTruncated, "string element 1"},
		{"nested too deep", nested, gguf.ErrInvalid, `"deep": arrays nested more than 8 deep`},
		{"bool 2", header(0, 1).str("b").u32(uint32(gguf.TypeBool)).u32(2)[:len(header(0, 1).str("b"))+5], gguf.ErrInvalid, "bool byte is 2"},
		{"bool array 2", append(header(0, 1).str("b").u32(9).u32(uint32(gguf.TypeBool)).u64(2), 1, 2), gguf.ErrInvalid, "bool array element 1 is 2"},
		{"string too long", header(0, 1).str("s").u32(uint32(gguf.TypeString)).u64(math.MaxUint64), gguf.ErrTruncated, "string value"},
		{"key too long", header(0, 1).u64(1 << 40).u64(0), gguf.ErrTruncated, "metadata key #0"},
		{"scalar cut", header(0, 1).str("k").u32(uint32(gguf.TypeUint64)).u32(0), gguf.ErrTruncated, "uint64 value"},
		{"alignment uint64", header(0, 1).str("general.alignment").u32(uint32(gguf.TypeUint64)).u64(32), gguf.ErrInvalid, "want uint32"},
		{"alignment 0", header(0, 1).kvU32("general.alignment", 0), gguf.ErrInvalid, "alignment 0 is not a power of two"},
		{"alignment 48", header(0, 1).kvU32("general.alignment", 48), gguf.ErrInvalid, "alignment 48 is not a power of two"},
		{"empty tensor name", header(1, 0).tensor("", f32, 0, 1).data(4), gguf.ErrInvalid, "tensor #0 has an empty name"},
		{"tensor name 64 bytes", header(1, 0).tensor(strings.Repeat("n", 64), f32, 0, 1).data(4), gguf.ErrInvalid, "name is 64 bytes"},
		{"duplicate tensor", header(2, 0).tensor("w", f32, 0, 1).tensor("w", f32, 32, 1).data(36), gguf.ErrInvalid, `tensor "w": appears twice`},
		{"5 dims", header(1, 0).tensor("w", f32, 0, 1, 1, 1, 1, 1).data(4), gguf.ErrInvalid, "5 dimensions"},
		{"dim 2^63", header(1, 0).tensor("w", gguf.TypeI8, 0, 1<<63).data(4), gguf.ErrInvalid, "more than 2^63-1"},
		{"element overflow", header(1, 0).tensor("w", gguf.TypeI8, 0, 1<<31, 1<<31, 4).data(4), gguf.ErrInvalid, "2^63 or more elements"},
		{"byte overflow", header(1, 0).tensor("w", gguf.TypeF64, 0, 1<<61).data(4), gguf.ErrInvalid, "2^63 bytes or more"},
		{"removed type 4", header(1, 0).tensor("w", gguf.Type(4), 0, 32).data(32), gguf.ErrInvalid, "unknown ggml tensor type 4"},
		{"type 1000", header(1, 0).tensor("w", gguf.Type(1000), 0, 32).data(32), gguf.ErrInvalid, "unknown ggml tensor type 1000"},
		{"partial block", header(1, 0).tensor("w", gguf.TypeQ4_0, 0, 33).data(36), gguf.ErrInvalid, "row length 33 is not a multiple of Q4_0's block size 32"},
		{"unaligned offset", header(1, 0).tensor("w", f32, 4, 1).data(8), gguf.ErrInvalid, "offset 4 is not a multiple of the alignment 32"},
		{"data past end", header(1, 0).tensor("w", f32, 0, 2).data(7), gguf.ErrTruncated, `tensor "w": data at offset 0, 8 bytes long, runs past the end of the 7-byte data section`},
		{"offset past end", header(1, 0).tensor("w", f32, 1<<63, 1).data(4), gguf.ErrTruncated, "runs past the end"},
		{"no data section", header(1, 0).tensor("w", f32, 0, 1), gguf.ErrTruncated, "data section would start at byte"},
		{"overlap", header(2, 0).tensor("a", f32, 0, 16).tensor("b", f32, 32, 1).data(64), gguf.ErrInvalid, `tensor "b": data [32, 36) overlaps tensor "a"'s [0, 64)`},
		{"same offset", header(2, 0).tensor("a", f32, 0, 1).tensor("b", f32, 0, 1).data(4), gguf.ErrInvalid, "overlaps"},
		{"tensor cut", header(1, 0).str("w").u32(2).u64(1).u32(0), gguf.ErrTruncated, `tensor "w": file ends inside dimension`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := gguf.Parse(tc.b)
			if err == nil {
				t.Fatalf("parsed: %d keys, %d tensors", len(f.KV), len(f.Tensors))
			}
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gguf: ") {
				t.Fatalf("error %q (kind %v), want kind %v containing %q", err, errors.Unwrap(err), tc.kind, tc.want)
			}
		})
	}
}

// TestAcceptedEdgeCases are files llama.cpp loads that the Writer would not
// produce.
func TestAcceptedEdgeCases(t *testing.T) {
	v2 := header(1, 1).kvU32("a", 7).tensor("w", gguf.TypeF32, 0, 2).data(8)
	binary.LittleEndian.PutUint32(v2[4:], 2)
	for _, tc := range []struct {
		name  string
		b     img
		check func(t *testing.T, f *gguf.File)
	}{
		{"version 2", v2, func(t *testing.T, f *gguf.File) {
			if x, _ := f.Uint("a"); f.Version != 2 || x != 7 || len(f.Data(&f.Tensors[0])) != 8 {
				t.Errorf("version %d, a=%d", f.Version, x)
			}
		}},
		{"no tensors, no padding", header(0, 1).kvU32("a", 7), func(t *testing.T, f *gguf.File) {
			if f.DataOffset != 24+8+1+4+4 {
				t.Errorf("DataOffset %d", f.DataOffset)
			}
		}},
		{"0 dims is a scalar", header(1, 0).tensor("s", gguf.TypeF32, 0).data(4), func(t *testing.T, f *gguf.File) {
			if ti := f.Tensors[0]; !equalShape(ti.Shape, []uint64{1}) || ti.Size != 4 {
				t.Errorf("shape %v size %d, want [1] 4", ti.Shape, ti.Size)
			}
		}},
		{"zero-size dims", header(2, 0).tensor("z", gguf.TypeQ4_K, 0, 0, 9).tensor("w", gguf.TypeF32, 0, 1).data(4), func(t *testing.T, f *gguf.File) {
			if f.Tensors[0].Size != 0 || f.Tensors[0].Elements() != 0 || len(f.Data(&f.Tensors[0])) != 0 {
				t.Errorf("zero tensor %+v", f.Tensors[0])
			}
		}},
		{"offsets out of directory order", header(2, 0).tensor("a", gguf.TypeF32, 32, 1).tensor("b", gguf.TypeF32, 0, 1).data(36), func(t *testing.T, f *gguf.File) {
			if f.Tensors[0].Offset != 32 || f.Tensors[1].Offset != 0 {
				t.Errorf("offsets %d %d", f.Tensors[0].Offset, f.Tensors[1].Offset)
			}
		}},
		{"alignment 1", header(1, 1).kvU32("general.alignment", 1).tensor("w", gguf.TypeI8, 3, 1), func(t *testing.T, f *gguf.File) {
			if f.Alignment != 1 {
				t.Errorf("alignment %d", f.Alignment)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			if tc.name == "alignment 1" {
				b = append(b, 0, 0, 0, 9) // data offset 3 holds the tensor's one byte
			}
			f, err := gguf.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, f)
		})
	}
}

// smallFile is a little of everything, with tensor data: the victim of the
// truncation test and a fuzz seed.
func smallFile(t testing.TB) []byte {
	w := gguf.NewWriter()
	w.Add("general.architecture", gguf.StringValue("llama"))
	w.Add("tokens", gguf.StringsValue([]string{"<s>", "a", ""}))
	w.Add("nested", gguf.ArrayValue(gguf.TypeArray, []gguf.Value{gguf.Int32sValue([]int32{1}), gguf.Float32sValue(nil)}))
	w.Add("flag", gguf.BoolValue(true))
	w.Add("eps", gguf.Float32Value(1e-6))
	for i, tt := range testTensors(3)[:3] {
		if i == 1 {
			w.SetAlignment(16)
		}
		if err := w.AddTensor(tt.name, tt.typ, tt.shape, tt.data); err != nil {
			t.Fatal(err)
		}
	}
	var buf strings.Builder
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}

// TestTruncated cuts a file at every length: each prefix that lacks part of
// the metadata, directory or tensor data is an ErrTruncated error; a prefix
// that lacks only the padding after the last tensor still parses.
func TestTruncated(t *testing.T) {
	full := smallFile(t)
	f, err := gguf.Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	var need uint64
	for _, ti := range f.Tensors {
		need = max(need, f.DataOffset+ti.Offset+ti.Size)
	}
	for n := range len(full) {
		f, err := gguf.Parse(full[:n])
		switch {
		case uint64(n) < need && (err == nil || !errors.Is(err, gguf.ErrTruncated)):
			t.Fatalf("prefix of %d/%d bytes: %v, want ErrTruncated", n, len(full), err)
		case uint64(n) >= need && err != nil:
			t.Fatalf("prefix of %d bytes (the data ends at %d): %v", n, need, err)
		case err == nil && len(f.Tensors) != 3:
			t.Fatalf("prefix of %d bytes: %d tensors", n, len(f.Tensors))
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := gguf.Open(filepath.Join(dir, "missing.gguf")); err == nil || !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "gguf: ") {
		t.Errorf("Open(missing) = %v", err)
	}
	if _, err := gguf.Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open(dir) = %v", err)
	}
	full := smallFile(t)
	for _, n := range []int{0, 10, 100, len(full) - 200} {
		path := filepath.Join(dir, "cut.gguf")
		if err := os.WriteFile(path, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := gguf.Open(path)
		var fe *gguf.FormatError
		if !errors.As(err, &fe) || fe.Path != path || !strings.HasPrefix(err.Error(), "gguf: "+path+": ") || !errors.Is(err, gguf.ErrTruncated) {
			t.Errorf("Open(%d-byte prefix) = %v", n, err)
		}
	}
}

// TestDataOutOfRange: Data checks a TensorInfo it did not hand out.
func TestDataOutOfRange(t *testing.T) {
	f, err := gguf.Parse(smallFile(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range []*gguf.TensorInfo{
		nil,
		{Name: "far", Offset: 1 << 62, Size: 4},
		{Name: "huge", Offset: 0, Size: math.MaxUint64},
		{Name: "wraps", Offset: math.MaxUint64 - 1, Size: 4},
	} {
		if d := f.Data(ti); d != nil {
			t.Errorf("Data(%+v) returned %d bytes", ti, len(d))
		}
	}
	last := f.Tensors[len(f.Tensors)-1]
	if d := f.Data(&last); len(d) != int(last.Size) || cap(d) != len(d) {
		t.Errorf("Data(last) len %d cap %d, want %d", len(d), cap(d), last.Size)
	}
	f.DataOffset = 1 << 40
	if d := f.Data(&f.Tensors[0]); d != nil {
		t.Errorf("Data with DataOffset past the end returned %d bytes", len(d))
	}
}
