package gguf

// KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// File is a parsed GGUF file: its metadata and tensor directory, and the
// image (a read-only mapping for Open) that tensor data is sliced from.
//
// Metadata (KV, Tensors, every Value) lives on the Go heap and stays valid
// after Close; slices returned by Data point into the mapping and must not
// be used after Close.
type File struct {
	Version    uint32
	KV         []KV         // in file order
	Tensors    []TensorInfo // in file order
	Alignment  uint64       // general.alignment, or 32
	DataOffset uint64       // absolute file offset of the data section

	data        []byte             // the whole file image; nil after Close
	unmap       func([]byte) error // releases data (Open), nil for Parse
	kvIndex     map[string]int     // key -> index in KV
	tensorIndex map[string]int     // name -> index in Tensors
}

// Close releases the mapping. Data slices handed out earlier become
// invalid (touching them faults); metadata stays usable. Close is
// idempotent.
func (f *File) Close() error {
	data, unmap := f.data, f.unmap
	f.data, f.unmap = nil, nil
	if unmap != nil && data != nil {
		return unmap(data)
	}
	return nil
}

// Data returns the bytes of tensor t, a sub-slice of the file image (no
// copy; its capacity ends with the tensor so appends cannot spill into the
// next one). It returns nil after Close or when t does not lie inside this
// file's data section.
func (f *File) Data(t *TensorInfo) []byte {
	if f.data == nil || t == nil || f.DataOffset > uint64(len(f.data)) {
		return nil
	}
	dataLen := uint64(len(f.data)) - f.DataOffset
	if t.Offset > dataLen || t.Size > dataLen-t.Offset {
		return nil
	}
	start := f.DataOffset + t.Offset
	end := start + t.Size
	return f.data[start:end:end]
}

// Tensor finds a tensor by name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tensorIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Value finds a metadata value by key.
func (f *File) Value(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// String returns a string value; ok is false when the key is missing or
// holds another type. The other shortcuts below behave alike, with the
// conversions of the Value accessor they call.
func (f *File) String(key string) (string, bool) {
	v, ok := f.Value(key)
	if !ok {
		return "", false
	}
	return v.String()
}

// Uint returns a non-negative integer value (see Value.Uint).
func (f *File) Uint(key string) (uint64, bool) {
	v, ok := f.Value(key)
	if !ok {
		return 0, false
	}
	return v.Uint()
}

// Int returns an integer value that fits in an int64 (see Value.Int).
func (f *File) Int(key string) (int64, bool) {
	v, ok := f.Value(key)
	if !ok {
		return 0, false
	}
	return v.Int()
}

// Float returns a float or integer value as float64 (see Value.Float).
func (f *File) Float(key string) (float64, bool) {
	v, ok := f.Value(key)
	if !ok {
		return 0, false
	}
	return v.Float()
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, bool) {
	v, ok := f.Value(key)
	if !ok {
		return false, false
	}
	return v.Bool()
}

// Strings returns a copy of an array of strings.
func (f *File) Strings(key string) ([]string, bool) {
	v, ok := f.Value(key)
	if !ok {
		return nil, false
	}
	return v.Strings()
}

// Float32s returns an array of float32 (or float64, converted).
func (f *File) Float32s(key string) ([]float32, bool) {
	v, ok := f.Value(key)
	if !ok {
		return nil, false
	}
	return v.Float32s()
}

// Int32s returns an integer array whose elements all fit in an int32.
func (f *File) Int32s(key string) ([]int32, bool) {
	v, ok := f.Value(key)
	if !ok {
		return nil, false
	}
	return v.Int32s()
}

// Architecture is general.architecture ("llama", "qwen2", ...), or "" when
// absent.
func (f *File) Architecture() string {
	s, _ := f.String("general.architecture")
	return s
}
