package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// WriteTensor is one tensor to write: name, dtype, row-major shape, and
// its bytes: Data, or, when Data is nil, what Fill writes (streamed, for
// tensors that should not sit in memory; it must write exactly the size
// dtype and shape give).
type WriteTensor struct {
	Name  string
	DType DType
	Shape []uint64
	Data  []byte
	Fill  func(w io.Writer) error
}

// size is the tensor's byte size from dtype and shape (0 for an unknown
// dtype, or one that overflows).
func (t *WriteTensor) size() (uint64, error) {
	n := t.DType.Size()
	if n == 0 {
		return 0, fmt.Errorf("safetensors: tensor %q: unknown dtype %q", t.Name, t.DType)
	}
	for _, d := range t.Shape {
		if d != 0 && n > (1<<62)/d {
			return 0, fmt.Errorf("safetensors: tensor %q: shape %v too large", t.Name, t.Shape)
		}
		n *= d
	}
	return n, nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n uint64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

// Write writes a safetensors file: the tensors in the order given, packed
// without gaps, the header padded with spaces to a multiple of 8 bytes as
// the reference writer does. Shapes and sizes are checked.
func Write(w io.Writer, metadata map[string]string, tensors []WriteTensor) error {
	hdr := map[string]any{}
	if metadata != nil {
		hdr["__metadata__"] = metadata
	}
	var off uint64
	sizes := make([]uint64, len(tensors))
	for i, t := range tensors {
		n, err := t.size()
		if err != nil {
			return err
		}
		sizes[i] = n
		if (t.Data != nil || t.Fill == nil) && uint64(len(t.Data)) != n {
			return fmt.Errorf("safetensors: tensor %q: %d bytes for %s %v, want %d", t.Name, len(t.Data), t.DType, t.Shape, n)
		}
		if _, dup := hdr[t.Name]; dup {
			return fmt.Errorf("safetensors: tensor %q written twice", t.Name)
		}
		shape := t.Shape
		if shape == nil {
			shape = []uint64{}
		}
		hdr[t.Name] = map[string]any{"dtype": t.DType, "shape": shape, "data_offsets": []uint64{off, off + n}}
		off += n
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(js)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	for i, t := range tensors {
		if t.Data != nil || t.Fill == nil {
			if _, err := w.Write(t.Data); err != nil {
				return err
			}
			continue
		}
		cw := &countWriter{w: w}
		if err := t.Fill(cw); err != nil {
			return fmt.Errorf("safetensors: tensor %q: %w", t.Name, err)
		}
		if cw.n != sizes[i] {
			return fmt.Errorf("safetensors: tensor %q: Fill wrote %d bytes, want %d", t.Name, cw.n, sizes[i])
		}
	}
	return nil
}

// WriteFile writes a safetensors file at path (see Write).
func WriteFile(path string, metadata map[string]string, tensors []WriteTensor) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(fh, metadata, tensors); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
