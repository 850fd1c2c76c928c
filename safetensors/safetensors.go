package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// MaxHeaderBytes bounds the JSON header, as the reference Rust crate does
// (100 MB): a larger length is a corrupt file, not a header to allocate.
const MaxHeaderBytes = 100 << 20

// DType is a safetensors element type name, as written in the header.
type DType string

// Element sizes in bytes of the dtypes the format defines.
var dtypeSizes = map[DType]uint64{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// Size is the element size in bytes, 0 for an unknown dtype.
func (d DType) Size() uint64 { return dtypeSizes[d] }

// Tensor is one entry of a header.
type Tensor struct {
	Name  string
	DType DType
	Shape []uint64 // row-major: Shape[len-1] is contiguous
	Begin uint64   // byte offsets relative to the end of the header
	End   uint64
}

// Elements is the product of Shape (1 for a scalar).
func (t *Tensor) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is one parsed .safetensors file.
type File struct {
	Path     string
	Metadata map[string]string // __metadata__, nil if absent
	Tensors  []Tensor          // in header order
	// DataOffset is where tensor data starts: 8 + the header length.
	DataOffset uint64

	data  []byte
	unmap func([]byte) error
	index map[string]int
}

// Error is a malformed file: which file, and what is wrong.
type Error struct {
	Path string // "" for Parse
	Msg  string
}

func (e *Error) Error() string {
	if e.Path != "" {
		return "safetensors: " + e.Path + ": " + e.Msg
	}
	return "safetensors: " + e.Msg
}

func errorf(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// rawTensor is a header entry as JSON.
type rawTensor struct {
	DType       *string   `json:"dtype"`
	Shape       *[]uint64 `json:"shape"`
	DataOffsets *[]uint64 `json:"data_offsets"`
}

// Parse validates data as a whole safetensors file and indexes its tensors.
// The File's tensor data are views into data.
func Parse(data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, errorf("file is %d bytes, too short for the 8-byte header length", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > MaxHeaderBytes {
		return nil, errorf("header length %d is more than the %d-byte limit (not a safetensors file?)", n, MaxHeaderBytes)
	}
	if n > uint64(len(data)-8) {
		return nil, errorf("header length %d runs past the end of the %d-byte file (truncated?)", n, len(data))
	}
	hdr := data[8 : 8+n]
	if len(bytes.TrimSpace(hdr)) == 0 || bytes.TrimLeft(hdr, " \t\r\n")[0] != '{' {
		return nil, errorf("header does not start with a JSON object")
	}
	f := &File{DataOffset: 8 + n, data: data, index: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return nil, errorf("header JSON: %v", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errorf("header JSON: %v", err)
		}
		name, _ := tok.(string)
		if name == "__metadata__" {
			if f.Metadata != nil {
				return nil, errorf("header has two __metadata__ entries")
			}
			if err := dec.Decode(&f.Metadata); err != nil {
				return nil, errorf("__metadata__ must map strings to strings: %v", err)
			}
			if f.Metadata == nil {
				f.Metadata = map[string]string{}
			}
			continue
		}
		var raw rawTensor
		if err := dec.Decode(&raw); err != nil {
			return nil, errorf("tensor %q: header JSON: %v", name, err)
		}
		if _, dup := f.index[name]; dup {
			return nil, errorf("tensor %q appears twice in the header", name)
		}
		t, err := check(name, &raw)
		if err != nil {
			return nil, err
		}
		f.index[name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, errorf("header JSON: %v", err)
	}
	if rest := strings.TrimSpace(string(hdr[dec.InputOffset():])); rest != "" {
		return nil, errorf("header has %d bytes of trailing data after its JSON object", len(rest))
	}
	if err := f.layout(uint64(len(data)) - f.DataOffset); err != nil {
		return nil, err
	}
	return f, nil
}

// check validates one header entry on its own.
func check(name string, raw *rawTensor) (Tensor, error) {
	t := Tensor{Name: name}
	if name == "" {
		return t, errorf("a tensor has an empty name")
	}
	if raw.DType == nil || raw.Shape == nil || raw.DataOffsets == nil {
		return t, errorf("tensor %q needs dtype, shape and data_offsets", name)
	}
	t.DType = DType(*raw.DType)
	size := t.DType.Size()
	if size == 0 {
		return t, errorf("tensor %q has unknown dtype %q", name, t.DType)
	}
	t.Shape = *raw.Shape
	if len(t.Shape) > 8 {
		return t, errorf("tensor %q has %d dimensions, more than 8", name, len(t.Shape))
	}
	n := uint64(1)
	for _, d := range t.Shape {
		if d != 0 && n > math.MaxInt64/size/d {
			return t, errorf("tensor %q: shape %v is 2^63 bytes or more", name, t.Shape)
		}
		n *= d
	}
	offs := *raw.DataOffsets
	if len(offs) != 2 {
		return t, errorf("tensor %q: data_offsets has %d entries, want [begin, end]", name, len(offs))
	}
	t.Begin, t.End = offs[0], offs[1]
	if t.End < t.Begin {
		return t, errorf("tensor %q: data_offsets [%d, %d] end before they begin", name, t.Begin, t.End)
	}
	if t.End-t.Begin != n*size {
		return t, errorf("tensor %q: data_offsets [%d, %d] hold %d bytes, but %s %v needs %d", name, t.Begin, t.End, t.End-t.Begin, t.DType, t.Shape, n*size)
	}
	return t, nil
}

// layout checks that every tensor lies inside the data section and that no
// two overlap. Gaps are allowed (the reference writer leaves none).
func (f *File) layout(dataLen uint64) error {
	order := make([]int, len(f.Tensors))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return f.Tensors[order[a]].Begin < f.Tensors[order[b]].Begin })
	var prev *Tensor
	for _, i := range order {
		t := &f.Tensors[i]
		if t.End > dataLen {
			return errorf("tensor %q: data_offsets [%d, %d] run past the %d bytes of data (truncated file?)", t.Name, t.Begin, t.End, dataLen)
		}
		if prev != nil && t.Begin < prev.End && t.End > t.Begin {
			return errorf("tensors %q [%d, %d] and %q [%d, %d] overlap", prev.Name, prev.Begin, prev.End, t.Name, t.Begin, t.End)
		}
		if t.End > t.Begin {
			prev = t
		}
	}
	return nil
}

// Open maps the file at path read-only and parses it. Close it when done
// with it and with every slice Data returned.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Path: path, Msg: "not a regular file"}
	}
	size := st.Size()
	var data []byte
	var unmap func([]byte) error
	switch {
	case size < 8:
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("safetensors: %w", err)
		}
	case int64(int(size)) != size:
		return nil, &Error{Path: path, Msg: fmt.Sprintf("%d bytes, too large to map on this platform", size)}
	default:
		if data, unmap, err = mapFile(fh, int(size)); err != nil {
			return nil, fmt.Errorf("safetensors: mapping %s: %w", path, err)
		}
	}
	f, err := Parse(data)
	if err != nil {
		if unmap != nil {
			unmap(data)
		}
		if e, ok := err.(*Error); ok {
			e.Path = path
		}
		return nil, err
	}
	f.Path, f.unmap = path, unmap
	return f, nil
}

// Close releases the mapping; Data slices handed out become invalid.
func (f *File) Close() error {
	data, unmap := f.data, f.unmap
	f.data, f.unmap = nil, nil
	if unmap != nil && data != nil {
		return unmap(data)
	}
	return nil
}

// Tensor finds a tensor by name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.index[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Data returns the bytes of t (a tensor of this file) without copying; nil
// after Close. Its capacity ends with the tensor.
func (f *File) Data(t *Tensor) []byte {
	if f.data == nil || t == nil {
		return nil
	}
	start, end := f.DataOffset+t.Begin, f.DataOffset+t.End
	if end > uint64(len(f.data)) || start > end {
		return nil
	}
	return f.data[start:end:end]
}
