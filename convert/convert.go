package convert

import (
	"fmt"
	"io"

	"kiln/gguf"
)

// Options control Convert.
type Options struct {
	Scheme Scheme // target file type, mix or pure

	// AllowRequantize lets quantized input tensors be dequantized and
	// quantized again (llama-quantize --allow-requantize); without it such
	// a tensor is an error, since every requantization loses precision.
	// F16 and BF16 inputs never need it.
	AllowRequantize bool

	// Progress, when set, is told the output bytes written so far and
	// about how many there will be (the tensor data), as the file is
	// written: kiln's progress display.
	Progress func(written, total int64)
}

// watch feeds opts.Progress from w.
func (opts Options) watch(w *gguf.Writer) {
	if opts.Progress != nil {
		total := w.DataBytes()
		w.OnWrite = func(n int64) { opts.Progress(n, total) }
	}
}

// TensorReport is what Convert did to one tensor.
type TensorReport struct {
	Name     string
	Shape    []uint64
	From, To gguf.Type
	Bytes    uint64 // size written
}

// Report sums up a conversion.
type Report struct {
	FileType FileType
	Tensors  []TensorReport // in output order
	BytesIn  uint64         // tensor data read
	BytesOut uint64         // tensor data written
}

// Plan works out, without writing anything, the directory Convert writes
// for the model in f: its tensors in output order and the type of each
// under opts, checking that every conversion is possible.
func Plan(f *gguf.File, opts Options) (*Report, error) {
	info, err := ModelInfoFrom(f)
	if err != nil {
		return nil, err
	}
	return plan(info, f.Tensors, opts)
}

// plan is Plan for a model's tensors, wherever they come from.
func plan(info ModelInfo, tensors []gguf.TensorInfo, opts Options) (*Report, error) {
	if len(tensors) == 0 {
		return nil, fmt.Errorf("convert: the model has no tensors: nothing to convert")
	}
	types, err := ChooseTypes(info, tensors, opts.Scheme)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tensors))
	for i, t := range tensors {
		names[i] = t.Name
	}
	rep := &Report{FileType: opts.Scheme.FileType}
	for _, i := range LlamaOrder(names) {
		t := &tensors[i]
		to := types[i]
		if to != t.Type {
			if !Quantizable(t.Name, t.Shape) {
				return nil, fmt.Errorf("convert: tensor %s: cannot change %s to %s", t.Name, t.Type, to)
			}
			if isQuantized(t.Type) && !opts.AllowRequantize {
				return nil, fmt.Errorf("convert: tensor %s is already %s: requantizing loses precision; allow it explicitly (--allow-requantize) or start from an F32/F16/BF16 file", t.Name, t.Type)
			}
			if !CanDecode(t.Type) {
				return nil, fmt.Errorf("convert: tensor %s: cannot read type %s", t.Name, t.Type)
			}
		}
		n, err := to.RowBytes(int(t.Shape[0]))
		if err != nil {
			return nil, fmt.Errorf("convert: tensor %s: %w", t.Name, err)
		}
		size := uint64(n) * (t.Elements() / t.Shape[0])
		rep.Tensors = append(rep.Tensors, TensorReport{Name: t.Name, Shape: t.Shape, From: t.Type, To: to, Bytes: size})
		rep.BytesIn += t.Size
		rep.BytesOut += size
	}
	return rep, nil
}

// ModelInfoFrom reads the fields of ModelInfo from a model's metadata.
// Per-layer head counts (arrays, as some architectures store them) give
// their first layer's value.
func ModelInfoFrom(f *gguf.File) (ModelInfo, error) {
	arch := f.Architecture()
	if arch == "" {
		return ModelInfo{}, fmt.Errorf("convert: no general.architecture: not a model file")
	}
	first := func(key string) int {
		v, ok := f.Value(arch + "." + key)
		if !ok {
			return 0
		}
		if n, ok := v.Uint(); ok {
			return int(n)
		}
		if xs, ok := v.Int32s(); ok && len(xs) > 0 {
			return int(xs[0])
		}
		return 0
	}
	m := ModelInfo{Arch: arch, Layers: first("block_count"), Heads: first("attention.head_count"), KVHeads: first("attention.head_count_kv"),
		Experts: first("expert_count")}
	if m.Layers <= 0 {
		return ModelInfo{}, fmt.Errorf("convert: %s.block_count missing or zero", arch)
	}
	return m, nil
}

// splitKeys are the metadata of split files, which llama-quantize drops.
var splitKeys = map[string]bool{"split.no": true, "split.count": true, "split.tensors.count": true}

// Convert reads the GGUF at in and writes it to out with its tensors
// converted as opts says (see Plan), in llama.cpp's tensor order, metadata
// copied with general.quantization_version and general.file_type set, as
// llama-quantize writes it. Tensors whose type does not change are copied
// byte for byte; the others stream through float32 one batch of rows at a
// time. out is replaced atomically (a temporary file beside it, renamed
// at the end and removed on failure); it may be the same path as in, which
// then is gone (kiln quantize refuses that). A file without tensors is an
// error: there is nothing to convert.
func Convert(in, out string, opts Options) (*Report, error) {
	f, err := gguf.Open(in)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	defer f.Close()
	rep, err := Plan(f, opts)
	if err != nil {
		return nil, err
	}
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if !splitKeys[kv.Key] {
			w.Add(kv.Key, kv.Value)
		}
	}
	w.Add("general.quantization_version", gguf.Uint32Value(2))
	w.Add("general.file_type", gguf.Uint32Value(uint32(opts.Scheme.FileType)))
	for _, tr := range rep.Tensors {
		t, _ := f.Tensor(tr.Name)
		data := f.Data(t)
		if data == nil {
			return nil, fmt.Errorf("convert: tensor %s: data outside the file", t.Name)
		}
		if tr.To == t.Type {
			err = w.AddTensor(t.Name, t.Type, t.Shape, data)
		} else {
			err = w.AddTensorFunc(t.Name, tr.To, t.Shape, func(dst io.Writer) error {
				return convertTensor(dst, t, data, tr.To)
			})
		}
		if err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
	}
	opts.watch(w)
	if err := w.WriteFile(out); err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	return rep, nil
}

// convertTensor decodes t's data row by row and writes it encoded as to.
func convertTensor(dst io.Writer, t *gguf.TensorInfo, data []byte, to gguf.Type) error {
	ne0 := int(t.Shape[0])
	inRow, err := t.Type.RowBytes(ne0)
	if err != nil {
		return err
	}
	rows := int(t.Elements() / t.Shape[0])
	return WriteRows(dst, to, ne0, rows, func(r int, row []float32) error {
		return Decode(t.Type, data[r*inRow:(r+1)*inRow], row)
	})
}
