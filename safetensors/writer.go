package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// WriteTensor is one tensor to write: name, dtype, row-major shape, bytes.
type WriteTensor struct {
	Name  string
	DType DType
	Shape []uint64
	Data  []byte
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
	for _, t := range tensors {
		n := t.DType.Size()
		if n == 0 {
			return fmt.Errorf("safetensors: tensor %q: unknown dtype %q", t.Name, t.DType)
		}
		for _, d := range t.Shape {
			n *= d
		}
		if uint64(len(t.Data)) != n {
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
	for _, t := range tensors {
		if _, err := w.Write(t.Data); err != nil {
			return err
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
