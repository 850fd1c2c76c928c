package safetensors

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func f32bytes(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func u16bytes(xs ...uint16) []byte {
	b := make([]byte, 2*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint16(b[2*i:], x)
	}
	return b
}

var sample = []WriteTensor{
	{Name: "a.weight", DType: "F32", Shape: []uint64{2, 3}, Data: f32bytes(1, 2, 3, 4, 5, 6)},
	{Name: "b.half", DType: "F16", Shape: []uint64{4}, Data: u16bytes(0x3c00, 0x4000, 0xc000, 0)},
	{Name: "c.bf", DType: "BF16", Shape: []uint64{1, 2}, Data: u16bytes(0x3f80, 0x4040)},
	{Name: "d.scalar", DType: "F32", Data: f32bytes(7)},
	{Name: "e.empty", DType: "F32", Shape: []uint64{0, 5}},
}

// TestWriteFill: a tensor streamed by Fill is written as its Data would
// be; Fill writing the wrong number of bytes is an error.
func TestWriteFill(t *testing.T) {
	streamed := append([]WriteTensor(nil), sample...)
	for i := range streamed {
		data := streamed[i].Data
		streamed[i].Data = nil
		streamed[i].Fill = func(w io.Writer) error { _, err := w.Write(data); return err }
	}
	if a, b := encode(t, nil, sample), encode(t, nil, streamed); !bytes.Equal(a, b) {
		t.Fatal("Fill output differs from Data output")
	}
	bad := []WriteTensor{{Name: "x", DType: "F32", Shape: []uint64{2}, Fill: func(w io.Writer) error { _, err := w.Write(f32bytes(1)); return err }}}
	if err := Write(io.Discard, nil, bad); err == nil || !strings.Contains(err.Error(), "Fill wrote 4 bytes, want 8") {
		t.Errorf("short Fill: %v", err)
	}
}

func encode(t testing.TB, meta map[string]string, ts []WriteTensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, meta, ts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.safetensors")
	if err := WriteFile(path, map[string]string{"format": "pt"}, sample); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Metadata["format"] != "pt" || len(f.Tensors) != len(sample) {
		t.Fatalf("metadata %v, %d tensors", f.Metadata, len(f.Tensors))
	}
	if (f.DataOffset-8)%8 != 0 {
		t.Errorf("header length %d not padded to 8", f.DataOffset-8)
	}
	for _, w := range sample {
		got, ok := f.Tensor(w.Name)
		if !ok {
			t.Fatalf("no tensor %s", w.Name)
		}
		if got.DType != w.DType || len(got.Shape) != len(w.Shape) || got.Elements()*got.DType.Size() != uint64(len(w.Data)) {
			t.Errorf("%s: got %s %v", w.Name, got.DType, got.Shape)
		}
		if !bytes.Equal(f.Data(got), w.Data) {
			t.Errorf("%s: data %x, want %x", w.Name, f.Data(got), w.Data)
		}
	}
	f.Close()
	if f.Data(&f.Tensors[0]) != nil {
		t.Error("Data after Close is not nil")
	}
}

// header builds a file from a literal JSON header and n data bytes.
func header(js string, n int) []byte {
	b := make([]byte, 8, 8+len(js)+n)
	binary.LittleEndian.PutUint64(b, uint64(len(js)))
	b = append(b, js...)
	return append(b, make([]byte, n)...)
}

var corrupt = []struct {
	name string
	data []byte
	want string
}{
	{"empty", nil, "too short"},
	{"short length", []byte{1, 2, 3}, "too short"},
	{"absurd header length", binary.LittleEndian.AppendUint64(nil, 1<<40), "more than the"},
	{"header past end", append(binary.LittleEndian.AppendUint64(nil, 100), "{}"...), "runs past the end"},
	{"not an object", header(`[1,2]`, 0), "JSON object"},
	{"blank header", header(`    `, 0), "JSON object"},
	{"bad json", header(`{"a":`, 0), "header JSON"},
	{"trailing data", header(`{} {}`, 0), "trailing data"},
	{"unknown dtype", header(`{"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}`, 1), `unknown dtype "Q4"`},
	{"missing field", header(`{"a":{"dtype":"F32","shape":[1]}}`, 4), "needs dtype, shape and data_offsets"},
	{"negative dim", header(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, 4), `tensor "a"`},
	{"offsets count", header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}`, 4), "want [begin, end]"},
	{"end before begin", header(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}`, 4), "end before"},
	{"size mismatch", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 8), "needs 8"},
	{"out of range", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), "run past the 4 bytes"},
	{"huge shape", header(`{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, 8), "2^63 bytes"},
	{"overlap", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, 12), "overlap"},
	{"duplicate", header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "appears twice"},
	{"bad metadata", header(`{"__metadata__":{"k":1}}`, 0), "__metadata__"},
	{"too many dims", header(`{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}`, 1), "9 dimensions"},
	{"empty name", header(`{"":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, 1), "empty name"},
}

func TestCorruptHeaders(t *testing.T) {
	for _, tc := range corrupt {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "safetensors: ") {
				t.Fatalf("Parse error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Open names the file.
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(path, corrupt[len(corrupt)-3].data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open error = %v, want one naming %s", err, path)
	}
}

func TestGapsAndZeroSizedTensorsAreAccepted(t *testing.T) {
	f, err := Parse(header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},"z":{"dtype":"F32","shape":[0],"data_offsets":[9,9]}}`, 12))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := f.Tensor("a"); len(f.Data(a)) != 4 {
		t.Fatalf("a: %d bytes", len(f.Data(a)))
	}
}

func writeShards(t *testing.T, index string) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "model-00001-of-00002.safetensors"), nil, sample[:2]); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), nil, sample[2:]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, IndexName), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const goodIndex = `{"metadata":{"total_size":48},"weight_map":{
 "a.weight":"model-00001-of-00002.safetensors","b.half":"model-00001-of-00002.safetensors",
 "c.bf":"model-00002-of-00002.safetensors","d.scalar":"model-00002-of-00002.safetensors","e.empty":"model-00002-of-00002.safetensors"}}`

func TestShardedIndex(t *testing.T) {
	s, err := OpenDir(writeShards(t, goodIndex))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Files) != 2 || len(s.Names()) != len(sample) {
		t.Fatalf("%d files, names %v", len(s.Files), s.Names())
	}
	for _, w := range sample {
		ti, f, ok := s.Tensor(w.Name)
		if !ok || !bytes.Equal(f.Data(ti), w.Data) {
			t.Errorf("%s: ok %v, wrong data", w.Name, ok)
		}
	}
	if _, _, ok := s.Tensor("nope"); ok {
		t.Error("found a tensor that is not there")
	}
}

func TestShardedIndexErrors(t *testing.T) {
	for _, tc := range []struct{ name, index, want string }{
		{"not json", `{`, "not a JSON index"},
		{"empty map", `{"weight_map":{}}`, "weight_map is missing"},
		{"missing shard", `{"weight_map":{"a.weight":"model-00009.safetensors"}}`, "model-00009.safetensors"},
		{"path escape", `{"weight_map":{"a.weight":"../x.safetensors"}}`, "not a file name"},
		{"wrong shard", strings.Replace(goodIndex, `"c.bf":"model-00002`, `"c.bf":"model-00001`, 1), `has no tensor "c.bf"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenDir(writeShards(t, tc.index))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("OpenDir error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("duplicate across shards", func(t *testing.T) {
		dir := writeShards(t, goodIndex)
		if err := WriteFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), nil, append(sample[2:], sample[0])); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenDir(dir); err == nil || !strings.Contains(err.Error(), `"a.weight" is also in`) {
			t.Fatalf("OpenDir error = %v", err)
		}
	})
	t.Run("empty folder", func(t *testing.T) {
		if _, err := OpenDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither model.safetensors nor") {
			t.Fatalf("OpenDir error = %v", err)
		}
	})
}

func FuzzHeader(f *testing.F) {
	f.Add(encode(f, map[string]string{"format": "pt"}, sample))
	for _, tc := range corrupt {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "safetensors: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		for i := range sf.Tensors {
			ti := &sf.Tensors[i]
			if d := sf.Data(ti); uint64(len(d)) != ti.Elements()*ti.DType.Size() {
				t.Fatalf("%s: %d bytes, want %d", ti.Name, len(d), ti.Elements()*ti.DType.Size())
			}
		}
	})
}
