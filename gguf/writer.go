package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Writer builds a GGUF v3 file: metadata in insertion order, then the tensor
// directory, then each tensor's data padded to the alignment, laid out
// exactly as llama.cpp's writer does (offsets consecutive in directory
// order). The output is a pure function of the calls made: no timestamps,
// no map order.
//
// Add and SetAlignment record the first error they meet; WriteTo and
// WriteFile return it (as does Err). AddTensor and AddTensorFunc return
// theirs directly.
type Writer struct {
	kv      []KV
	kvIndex map[string]int
	tensors []pendingTensor
	names   map[string]bool
	align   uint64
	err     error

	// OnWrite, when set, is called with the bytes written so far each time
	// WriteTo passes a buffer to its output (every 64 KiB): a progress
	// display's feed, whose total is about DataBytes.
	OnWrite func(written int64)
}

// pendingTensor is a tensor to be written: its data is either held (data)
// or produced on demand (write).
type pendingTensor struct {
	name  string
	typ   Type
	shape []uint64
	size  uint64
	data  []byte
	write func(io.Writer) error
}

// NewWriter returns an empty Writer with the default alignment of 32.
func NewWriter() *Writer {
	return &Writer{kvIndex: map[string]int{}, names: map[string]bool{}, align: defaultAlignment}
}

// Err returns the first error recorded by Add or SetAlignment.
func (w *Writer) Err() error { return w.err }

func (w *Writer) setErr(err error) {
	if w.err == nil {
		w.err = err
	}
}

// SetAlignment sets the data alignment in bytes (a power of two that fits
// in a uint32) and records it as general.alignment, as readers expect.
func (w *Writer) SetAlignment(n uint64) {
	if n == 0 || n&(n-1) != 0 || n > math.MaxUint32 {
		w.setErr(fmt.Errorf("gguf: alignment %d is not a power of two below 2^32", n))
		return
	}
	w.Add(alignmentKey, Uint32Value(uint32(n)))
}

// Add sets metadata key to v. Keys keep the order of their first Add; adding
// a key again replaces its value in place. general.alignment must be a
// uint32 power of two and sets the alignment.
func (w *Writer) Add(key string, v Value) {
	if key == "" {
		w.setErr(fmt.Errorf("gguf: metadata key is empty"))
		return
	}
	if err := v.check(0); err != nil {
		w.setErr(fmt.Errorf("gguf: metadata key %q: %w", key, err))
		return
	}
	if key == alignmentKey {
		a, ok := v.Uint()
		if v.Type() != TypeUint32 || !ok || a == 0 || a&(a-1) != 0 {
			w.setErr(fmt.Errorf("gguf: %s must be a uint32 power of two, got %s %v", alignmentKey, v.Type(), v))
			return
		}
		w.align = a
	}
	if i, ok := w.kvIndex[key]; ok {
		w.kv[i].Value = v
		return
	}
	w.kvIndex[key] = len(w.kv)
	w.kv = append(w.kv, KV{Key: key, Value: v})
}

// AddTensor appends a tensor whose data is in memory. data is not copied:
// leave it unchanged until the file is written.
func (w *Writer) AddTensor(name string, typ Type, shape []uint64, data []byte) error {
	t, err := w.newTensor(name, typ, shape)
	if err != nil {
		return err
	}
	if uint64(len(data)) != t.size {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, but %s %v needs %d", name, len(data), typ, shape, t.size)
	}
	t.data = data
	w.add(t)
	return nil
}

// AddTensorFunc appends a tensor whose data write produces when the file is
// written, so a model larger than memory can be streamed out. write must
// produce exactly the size implied by typ and shape; more or fewer bytes
// make WriteTo fail.
func (w *Writer) AddTensorFunc(name string, typ Type, shape []uint64, write func(io.Writer) error) error {
	t, err := w.newTensor(name, typ, shape)
	if err != nil {
		return err
	}
	if write == nil {
		return fmt.Errorf("gguf: tensor %q: write function is nil", name)
	}
	t.write = write
	w.add(t)
	return nil
}

func (w *Writer) newTensor(name string, typ Type, shape []uint64) (pendingTensor, error) {
	switch {
	case name == "":
		return pendingTensor{}, fmt.Errorf("gguf: tensor name is empty")
	case len(name) > maxNameLen:
		return pendingTensor{}, fmt.Errorf("gguf: tensor %q: name is %d bytes, llama.cpp allows at most %d", name, len(name), maxNameLen)
	case w.names[name]:
		return pendingTensor{}, fmt.Errorf("gguf: tensor %q added twice", name)
	}
	size, err := tensorSize(typ, shape)
	if err != nil {
		return pendingTensor{}, fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	return pendingTensor{name: name, typ: typ, shape: append([]uint64(nil), shape...), size: size}, nil
}

func (w *Writer) add(t pendingTensor) {
	w.names[t.name] = true
	w.tensors = append(w.tensors, t)
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w       io.Writer
	n       int64
	onWrite func(int64) // Writer.OnWrite
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.onWrite != nil {
		c.onWrite(c.n)
	}
	return n, err
}

// exactWriter passes on at most left bytes and fails past that: it holds a
// tensor's write function to the size its shape implies.
type exactWriter struct {
	w    io.Writer
	name string
	size uint64
	left uint64
	over bool // a Write asked for more than left
}

func (e *exactWriter) Write(p []byte) (int, error) {
	if uint64(len(p)) > e.left {
		e.over = true
		return 0, fmt.Errorf("gguf: tensor %q: write function produced more than the %d bytes its type and shape need", e.name, e.size)
	}
	n, err := e.w.Write(p)
	e.left -= uint64(n)
	return n, err
}

// DataBytes is the size of the tensor data WriteTo writes, alignment
// padding included: the file's size but for its header.
func (w *Writer) DataBytes() int64 {
	var n uint64
	for _, t := range w.tensors {
		n += pad(t.size, w.align)
	}
	return int64(n)
}

// WriteTo writes the file to out and returns the number of bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	cw := &countWriter{w: out, onWrite: w.OnWrite}
	bw := bufio.NewWriterSize(cw, 1<<16)
	e := encoder{w: bw}

	e.raw([]byte(magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		e.value(kv.Value)
	}
	offset := uint64(0) // of the next tensor, from the start of the data section
	for _, t := range w.tensors {
		e.str(t.name)
		e.u32(uint32(len(t.shape)))
		for _, d := range t.shape {
			e.u64(d)
		}
		e.u32(uint32(t.typ))
		e.u64(offset)
		offset += pad(t.size, w.align)
	}
	if len(w.tensors) > 0 {
		e.zeros(pad(uint64(e.n), w.align) - uint64(e.n))
	}
	for _, t := range w.tensors {
		if e.err != nil {
			break
		}
		if t.write == nil {
			e.raw(t.data)
		} else {
			ew := &exactWriter{w: bw, name: t.name, size: t.size, left: t.size}
			if err := t.write(ew); err != nil {
				e.err = fmt.Errorf("gguf: writing tensor %q: %w", t.name, err)
				break
			}
			if ew.over {
				e.err = fmt.Errorf("gguf: tensor %q: write function produced more than the %d bytes its type and shape need", t.name, t.size)
				break
			}
			if ew.left != 0 {
				e.err = fmt.Errorf("gguf: tensor %q: write function produced %d bytes, its type and shape need %d", t.name, t.size-ew.left, t.size)
				break
			}
			e.n += int64(t.size)
		}
		e.zeros(pad(t.size, w.align) - t.size)
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	return cw.n, e.err
}

// pad rounds n up to a multiple of align (a power of two).
func pad(n, align uint64) uint64 { return (n + align - 1) &^ (align - 1) }

// WriteFile writes the file to path atomically: into a temporary file in
// the same directory, synced, then renamed over path.
func (w *Writer) WriteFile(path string) (err error) {
	if w.err != nil {
		return w.err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = w.WriteTo(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

// encoder writes little-endian GGUF primitives, keeping the first error
// and the count of bytes written (for the alignment padding).
type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(p []byte) {
	if e.err != nil {
		return
	}
	_, e.err = e.w.Write(p)
	e.n += int64(len(p))
}

func (e *encoder) u32(x uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], x)
	e.raw(e.buf[:4])
}

func (e *encoder) u64(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], x)
	e.raw(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err != nil {
		return
	}
	_, e.err = e.w.WriteString(s)
	e.n += int64(len(s))
}

var zeroPad [64]byte

func (e *encoder) zeros(n uint64) {
	for n > 0 && e.err == nil {
		k := min(n, uint64(len(zeroPad)))
		e.raw(zeroPad[:k])
		n -= k
	}
}

// value writes v's payload (its type tag is written by the caller: the
// KV loop, or the array header for elements).
func (e *encoder) value(v Value) {
	switch v.typ {
	case TypeString:
		e.str(v.str)
	case TypeArray:
		a := v.arr
		e.u32(uint32(a.elem))
		e.u64(uint64(a.n))
		switch a.elem {
		case TypeString:
			for _, s := range a.strs {
				e.str(s)
			}
		case TypeArray:
			for _, x := range a.vals {
				e.value(x)
			}
		default:
			e.raw(a.raw)
		}
	default:
		var b [8]byte
		e.raw(encodeScalar(b[:0], v.typ, v.num))
	}
}
