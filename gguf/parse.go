package gguf

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"
)

const (
	magic            = "GGUF"
	defaultAlignment = 32
	alignmentKey     = "general.alignment"

	minKVBytes     = 8 + 4 + 1     // key length, value type, smallest value
	minTensorBytes = 8 + 4 + 4 + 8 // name length, n_dims, type, offset
)

// decoder walks a file image front to back. Every read checks the bytes
// left first, so a hostile count can never cause a panic or an allocation
// larger than the file itself.
type decoder struct {
	b   []byte
	off int

	// what is being read, for error messages: ctxKind "metadata key" or
	// "tensor", ctxName the key or tensor name.
	ctxKind, ctxName string
}

func (d *decoder) left() int { return len(d.b) - d.off }

func (d *decoder) fail(kind error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if d.ctxKind != "" {
		msg = fmt.Sprintf("%s %q: %s", d.ctxKind, d.ctxName, msg)
	}
	return &FormatError{Offset: int64(d.off), Msg: msg, Kind: kind}
}

func (d *decoder) invalid(format string, args ...any) error {
	return d.fail(ErrInvalid, format, args...)
}

// need checks that n bytes remain for what.
func (d *decoder) need(n uint64, what string) error {
	if n > uint64(d.left()) {
		return d.fail(ErrTruncated, "file ends inside %s: need %d bytes, %d left (incomplete download or copy? fetch the file again)", what, n, d.left())
	}
	return nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	x := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return x, nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	x := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return x, nil
}

// str reads a length-prefixed string, copied onto the heap.
func (d *decoder) str(what string) (string, error) {
	n, err := d.u64(what + " length")
	if err != nil {
		return "", err
	}
	if err := d.need(n, what); err != nil {
		return "", err
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s, nil
}

// Parse reads a GGUF v2 or v3 image held in memory. The File refers to data
// (tensor data is handed out as sub-slices of it), so data must not be
// modified while the File is in use. Metadata is copied out of data.
func Parse(data []byte) (*File, error) {
	d := &decoder{b: data}
	f := &File{data: data}
	if err := d.header(f); err != nil {
		return nil, err
	}
	nTensors, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	// Bound both counts by the bytes left before allocating for them.
	if nKV > uint64(d.left())/minKVBytes {
		return nil, d.fail(ErrTruncated, "header says %d metadata entries, but the %d bytes left can hold at most %d (truncated file or corrupt header)", nKV, d.left(), d.left()/minKVBytes)
	}
	if nTensors > uint64(d.left())/minTensorBytes {
		return nil, d.fail(ErrTruncated, "header says %d tensors, but the %d bytes left can hold at most %d (truncated file or corrupt header)", nTensors, d.left(), d.left()/minTensorBytes)
	}
	if err := d.metadata(f, int(nKV)); err != nil {
		return nil, err
	}
	if err := d.tensors(f, int(nTensors)); err != nil {
		return nil, err
	}
	if err := d.layout(f); err != nil {
		return nil, err
	}
	return f, nil
}

// maxPlausibleVersion bounds the versions reported as "newer": GGUF has
// had 3 in as many years, so a larger number is a damaged field.
const maxPlausibleVersion = 16

// header reads and checks the magic and the version.
func (d *decoder) header(f *File) error {
	if len(d.b) < 4 {
		return d.fail(ErrTruncated, "%d bytes is too short for a GGUF file (magic and header need 24)", len(d.b))
	}
	switch m := string(d.b[:4]); m {
	case magic:
	case "lmgg", "fmgg", "tjgg", "algg": // 'ggml', 'ggmf', 'ggjt', 'ggla' as little-endian uint32
		return d.fail(ErrUnsupported, "this is a pre-GGUF ggml/GGJT file (magic %q); convert it to GGUF with llama.cpp's conversion scripts", m)
	default:
		return d.fail(ErrNotGGUF, "magic is %q, want \"GGUF\": not a GGUF file", m)
	}
	d.off = 4
	v, err := d.u32("version")
	if err != nil {
		return err
	}
	d.off -= 4 // report version problems at the version field
	switch {
	case v == 0:
		return d.fail(ErrInvalid, "version 0 is not a GGUF version")
	case v&0xFFFF == 0:
		return d.fail(ErrUnsupported, "version field reads %#x: this looks like a big-endian GGUF file; only little-endian files are supported (re-export it little-endian, e.g. gguf-py's gguf-convert-endian)", v)
	case v == 1:
		return d.fail(ErrUnsupported, "GGUF version 1 is no longer supported; convert the model again with a current llama.cpp to get version 3")
	case v > maxPlausibleVersion:
		// Not a version any writer made: a corrupt header, not a newer file.
		return d.fail(ErrInvalid, "version field reads %d, which is no GGUF version (2 and 3 exist): the file is likely corrupt", v)
	case v > 3:
		return d.fail(ErrUnsupported, "GGUF version %d is newer than this reader (2 and 3); a newer kiln may read it", v)
	}
	d.off += 4
	f.Version = v
	return nil
}

// metadata reads n key-value pairs and settles the alignment.
func (d *decoder) metadata(f *File, n int) error {
	f.KV = make([]KV, 0, n)
	f.kvIndex = make(map[string]int, n)
	for i := range n {
		d.ctxKind, d.ctxName = "", ""
		key, err := d.str(fmt.Sprintf("metadata key #%d", i))
		if err != nil {
			return err
		}
		if key == "" {
			return d.invalid("metadata key #%d is empty", i)
		}
		d.ctxKind, d.ctxName = "metadata key", key
		if j, dup := f.kvIndex[key]; dup {
			return d.invalid("appears twice (entries #%d and #%d)", j, i)
		}
		t, err := d.u32("value type")
		if err != nil {
			return err
		}
		v, err := d.value(ValueType(t), 0)
		if err != nil {
			return err
		}
		f.kvIndex[key] = i
		f.KV = append(f.KV, KV{Key: key, Value: v})
	}
	d.ctxKind, d.ctxName = "", ""

	f.Alignment = defaultAlignment
	if v, ok := f.Value(alignmentKey); ok {
		d.ctxKind, d.ctxName = "metadata key", alignmentKey
		if v.Type() != TypeUint32 {
			return d.invalid("is a %s, want uint32 (llama.cpp refuses it too)", v.Type())
		}
		a, _ := v.Uint()
		if a == 0 || a&(a-1) != 0 {
			return d.invalid("alignment %d is not a power of two", a)
		}
		f.Alignment = a
		d.ctxKind, d.ctxName = "", ""
	}
	return nil
}

// value reads one value of type t; depth is the array nesting level.
func (d *decoder) value(t ValueType, depth int) (Value, error) {
	switch {
	case t == TypeString:
		s, err := d.str("string value")
		return Value{typ: TypeString, str: s}, err
	case t == TypeArray:
		return d.array(depth)
	case !t.Valid():
		return Value{}, d.invalid("value type %d is not a GGUF value type (0..12)", uint32(t))
	}
	size := t.size()
	if err := d.need(uint64(size), t.String()+" value"); err != nil {
		return Value{}, err
	}
	num := decodeScalar(t, d.b[d.off:])
	if t == TypeBool && num > 1 {
		return Value{}, d.invalid("bool byte is %d, want 0 or 1", num)
	}
	d.off += size
	return Value{typ: t, num: num}, nil
}

// array reads an array's element type, count and elements.
func (d *decoder) array(depth int) (Value, error) {
	if depth+1 >= maxDepth {
		return Value{}, d.invalid("arrays nested more than %d deep", maxDepth)
	}
	et, err := d.u32("array element type")
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.Valid() {
		return Value{}, d.invalid("array element type %d is not a GGUF value type (0..12)", et)
	}
	n64, err := d.u64("array length")
	if err != nil {
		return Value{}, err
	}
	if least := uint64(elem.minSize()); n64 > uint64(d.left())/least {
		return Value{}, d.fail(ErrTruncated, "array of %d %s elements needs at least %d bytes each, but only %d bytes are left (truncated or corrupt file)", n64, elem, least, d.left())
	}
	n := int(n64)
	a := &array{elem: elem, n: n}
	switch elem {
	case TypeString:
		a.strs, err = d.strings(n)
		if err != nil {
			return Value{}, err
		}
	case TypeArray:
		a.vals = make([]Value, n)
		for i := range a.vals {
			if a.vals[i], err = d.value(TypeArray, depth+1); err != nil {
				return Value{}, err
			}
		}
	default:
		size := n * elem.size() // fits: checked against d.left() above
		a.raw = append([]byte(nil), d.b[d.off:d.off+size]...)
		if elem == TypeBool {
			for i, c := range a.raw {
				if c > 1 {
					return Value{}, d.invalid("bool array element %d is %d, want 0 or 1", i, c)
				}
			}
		}
		d.off += size
	}
	return Value{typ: TypeArray, arr: a}, nil
}

// strings reads n length-prefixed strings into one shared heap buffer: a
// 150,000-token vocabulary costs one allocation for its bytes, not 150,000.
func (d *decoder) strings(n int) ([]string, error) {
	start := d.off
	total := 0
	for i := range n {
		l, err := d.u64("string length")
		if err != nil {
			return nil, err
		}
		if l > uint64(d.left()) { // d.need, without formatting a name per element
			return nil, d.fail(ErrTruncated, "file ends inside string element %d: need %d bytes, %d left (incomplete download or copy? fetch the file again)", i, l, d.left())
		}
		d.off += int(l)
		total += int(l)
	}
	buf := make([]byte, 0, total)
	out := make([]string, n)
	off := start
	for i := range out {
		l := int(binary.LittleEndian.Uint64(d.b[off:]))
		off += 8
		if l > 0 {
			p := len(buf)
			buf = append(buf, d.b[off:off+l]...)
			out[i] = unsafe.String(&buf[p], l) // buf never changes after this loop
		}
		off += l
	}
	return out, nil
}

// tensors reads n tensor directory entries.
func (d *decoder) tensors(f *File, n int) error {
	f.Tensors = make([]TensorInfo, 0, n)
	f.tensorIndex = make(map[string]int, n)
	for i := range n {
		d.ctxKind, d.ctxName = "", ""
		name, err := d.str(fmt.Sprintf("tensor #%d name", i))
		if err != nil {
			return err
		}
		if name == "" {
			return d.invalid("tensor #%d has an empty name", i)
		}
		d.ctxKind, d.ctxName = "tensor", name
		if len(name) > maxNameLen {
			return d.invalid("name is %d bytes, llama.cpp allows at most %d", len(name), maxNameLen)
		}
		if j, dup := f.tensorIndex[name]; dup {
			return d.invalid("appears twice in the tensor directory (entries #%d and #%d)", j, i)
		}
		nDims, err := d.u32("dimension count")
		if err != nil {
			return err
		}
		if nDims > maxDims {
			return d.invalid("has %d dimensions, at most %d are allowed", nDims, maxDims)
		}
		shape := make([]uint64, max(nDims, 1)) // 0 dims (llama.cpp reads a scalar) is shape [1]
		shape[0] = 1
		for j := range nDims {
			if shape[j], err = d.u64("dimension"); err != nil {
				return err
			}
		}
		typ, err := d.u32("tensor type")
		if err != nil {
			return err
		}
		size, err := tensorSize(Type(typ), shape)
		if err != nil {
			return d.invalid("%v", err)
		}
		off, err := d.u64("data offset")
		if err != nil {
			return err
		}
		f.tensorIndex[name] = i
		f.Tensors = append(f.Tensors, TensorInfo{Name: name, Shape: shape, Type: Type(typ), Offset: off, Size: size})
	}
	d.ctxKind, d.ctxName = "", ""
	return nil
}

// layout places the data section after the directory (padded to the
// alignment when there are tensors, as llama.cpp does) and checks that every
// tensor's data is aligned, inside the file and overlaps no other.
func (d *decoder) layout(f *File) error {
	start := uint64(d.off)
	if len(f.Tensors) > 0 {
		start = (start + f.Alignment - 1) / f.Alignment * f.Alignment // no overflow: off < 2^62, Alignment <= 2^31
		if start > uint64(len(d.b)) {
			return d.fail(ErrTruncated, "tensor data section would start at byte %d (directory end padded to %d), but the file has only %d bytes (incomplete download?)", start, f.Alignment, len(d.b))
		}
	}
	f.DataOffset = start
	dataLen := uint64(len(d.b)) - start
	for i := range f.Tensors {
		t := &f.Tensors[i]
		d.ctxKind, d.ctxName = "tensor", t.Name
		if t.Offset%f.Alignment != 0 {
			return d.invalid("data offset %d is not a multiple of the alignment %d", t.Offset, f.Alignment)
		}
		if t.Offset > dataLen || t.Size > dataLen-t.Offset {
			return d.fail(ErrTruncated, "data at offset %d, %d bytes long, runs past the end of the %d-byte data section (file %d bytes; incomplete download?)", t.Offset, t.Size, dataLen, len(d.b))
		}
	}
	d.ctxKind, d.ctxName = "", ""
	// Overlap: sort by offset; each tensor must end before the next begins.
	order := make([]int, len(f.Tensors))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ta, tb := &f.Tensors[a], &f.Tensors[b]
		if ta.Offset != tb.Offset {
			if ta.Offset < tb.Offset {
				return -1
			}
			return 1
		}
		return int(min(ta.Size, 1)) - int(min(tb.Size, 1)) // empty tensors first at a shared offset
	})
	var prev *TensorInfo
	for _, i := range order {
		t := &f.Tensors[i]
		if t.Size == 0 {
			continue
		}
		if prev != nil && prev.Offset+prev.Size > t.Offset {
			d.ctxKind, d.ctxName = "tensor", t.Name
			return d.invalid("data [%d, %d) overlaps tensor %q's [%d, %d)", t.Offset, t.Offset+t.Size, prev.Name, prev.Offset, prev.Offset+prev.Size)
		}
		prev = t
	}
	return nil
}
