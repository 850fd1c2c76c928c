package synth

import (
	"fmt"
	"io"

	"kiln/convert"
	"kiln/gguf"
)

// Model is a planned synthetic model: everything about the file except
// the tensor data, which WriteTo and WriteFile generate as they stream.
type Model struct {
	Spec    Spec   // with defaults filled in and VocabSize set
	Vocab   *Vocab // padded to Spec.VocabSize
	Scheme  convert.Scheme
	Seed    uint64
	KV      []gguf.KV   // metadata in file order: general.*, {arch}.*, tokenizer.*
	Tensors []Tensor    // directory in file order
	Types   []gguf.Type // Types[i] is the ggml type of Tensors[i]

	// Progress, when set, is told the bytes WriteFile and WriteTo have
	// written and about how many there will be (the tensor data).
	Progress func(written, total int64)
}

// Plan validates spec and works out the file: the vocabulary (vocab, or a
// SyntheticVocab of spec.VocabSize tokens when vocab is nil; a VocabSize of
// 0 takes the vocabulary's size, a larger one pads it), the metadata, the
// tensor directory and each tensor's type under scheme.
func Plan(spec Spec, vocab *Vocab, scheme convert.Scheme, seed uint64) (*Model, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec = spec.withDefaults()
	var err error
	switch {
	case vocab == nil && spec.VocabSize == 0:
		return nil, fmt.Errorf("synth: no vocabulary and no vocab size")
	case vocab == nil:
		if vocab, err = SyntheticVocab(spec.VocabSize); err != nil {
			return nil, err
		}
	case spec.VocabSize == 0:
		spec.VocabSize = vocab.Size
	default:
		if vocab, err = vocab.Padded(spec.VocabSize); err != nil {
			return nil, err
		}
	}
	tensors, err := spec.Tensors()
	if err != nil {
		return nil, err
	}
	infos := make([]gguf.TensorInfo, len(tensors))
	for i, t := range tensors {
		infos[i] = gguf.TensorInfo{Name: t.Name, Shape: t.Shape, Type: gguf.TypeF32}
	}
	info := convert.ModelInfo{Arch: spec.Arch, Layers: spec.Layers, Heads: spec.Heads, KVHeads: spec.KVHeads, Experts: spec.Experts}
	types, err := convert.ChooseTypes(info, infos, scheme)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	kv := append(spec.Metadata(scheme.FileType), vocab.KV...)
	return &Model{Spec: spec, Vocab: vocab, Scheme: scheme, Seed: seed, KV: kv, Tensors: tensors, Types: types}, nil
}

// Write plans the model and writes it to path (atomically, via a
// temporary file): the one call `kiln synth` makes.
func Write(path string, spec Spec, vocab *Vocab, scheme convert.Scheme, seed uint64) error {
	m, err := Plan(spec, vocab, scheme, seed)
	if err != nil {
		return err
	}
	return m.WriteFile(path)
}

// writer sets up a gguf.Writer whose tensors generate their data on demand.
func (m *Model) writer() (*gguf.Writer, error) {
	w := gguf.NewWriter()
	for _, kv := range m.KV {
		w.Add(kv.Key, kv.Value)
	}
	for i := range m.Tensors {
		t, typ := &m.Tensors[i], m.Types[i]
		err := w.AddTensorFunc(t.Name, typ, t.Shape, func(out io.Writer) error {
			return m.writeTensor(out, t, typ)
		})
		if err != nil {
			return nil, fmt.Errorf("synth: %w", err)
		}
	}
	if m.Progress != nil {
		total := w.DataBytes()
		w.OnWrite = func(n int64) { m.Progress(n, total) }
	}
	return w, w.Err()
}

// WriteTo streams the model to out.
func (m *Model) WriteTo(out io.Writer) (int64, error) {
	w, err := m.writer()
	if err != nil {
		return 0, err
	}
	return w.WriteTo(out)
}

// WriteFile writes the model to path atomically.
func (m *Model) WriteFile(path string) error {
	w, err := m.writer()
	if err != nil {
		return err
	}
	return w.WriteFile(path)
}

// writeTensor generates t row by row and writes it encoded as typ. Each
// row has its own random stream, so rows are generated in parallel.
func (m *Model) writeTensor(out io.Writer, t *Tensor, typ gguf.Type) error {
	key := tensorKey(m.Seed, t.Name)
	return convert.WriteRows(out, typ, int(t.Shape[0]), t.Rows(), func(r int, dst []float32) error {
		t.fillRow(key, r, dst)
		return nil
	})
}
