package convert

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"kiln/gguf"
	"kiln/model"
	"kiln/tokenizer"
)

// FromHF converts the Hugging Face folder dir (config.json, safetensors
// weights, tokenizer.json) to a GGUF file at out, as llama.cpp's
// convert_hf_to_gguf.py followed by llama-quantize would: general.* and
// {arch}.* metadata as the script writes it, the tokenizer.ggml.* keys,
// tensors under GGUF names with llama's q/k rows permuted (model.OpenHF,
// the mapping LoadHF uses), one-dimensional tensors in F32, the others
// converted by opts.Scheme (ChooseTypes' mix rules). A zero FileType in
// opts with Auto keeps the matrices' stored type (F32, F16 or BF16).
//
// The tokenizer goes through Vocab.AsSPM: a Llama/Mistral-style
// tokenizer.json (normalizer-based BPE) becomes llama.cpp's "llama" model
// with scores from merge ranks; see AsSPM for the strings on which
// llama.cpp then cannot tokenize as Hugging Face does.
func FromHF(dir, out string, opts Options, auto bool) (*Report, error) {
	h, err := model.OpenHF(dir)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	defer h.Close()
	v, err := tokenizer.LoadHFTokenizer(dir)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if v, err = v.AsSPM(); err != nil {
		return nil, fmt.Errorf("convert: %s: the tokenizer cannot be written as llama.cpp reads it: %w", dir, err)
	}
	c := h.Config
	if v.Size() > c.Vocab {
		return nil, fmt.Errorf("convert: %s: tokenizer has %d tokens, the model's vocab_size is %d", dir, v.Size(), c.Vocab)
	}
	if v.Size() < c.Vocab {
		// convert_hf_to_gguf.py pads the vocab with [PADn] tokens.
		v = v.Clone()
		for i := v.Size(); i < c.Vocab; i++ {
			v.Tokens = append(v.Tokens, fmt.Sprintf("[PAD%d]", i))
			if v.Scores != nil {
				v.Scores = append(v.Scores, -1000)
			}
			if v.Types != nil {
				v.Types = append(v.Types, tokenizer.TypeUserDefined)
			}
		}
	}

	tensors, data, rep, err := hfPlan(h, opts, auto)
	if err != nil {
		return nil, err
	}

	w := gguf.NewWriter()
	for _, kv := range hfMetadata(h, filepath.Base(filepath.Clean(dir)), rep.FileType) {
		w.Add(kv.Key, kv.Value)
	}
	for _, kv := range v.Metadata() {
		w.Add(kv.Key, kv.Value)
	}
	byName := map[string]*gguf.TensorInfo{}
	for i := range tensors {
		byName[tensors[i].Name] = &tensors[i]
	}
	for _, tr := range rep.Tensors {
		t, d := byName[tr.Name], data[tr.Name]
		switch {
		case tr.To == t.Type && d.parts == nil:
			err = w.AddTensor(t.Name, t.Type, t.Shape, d.whole)
		case tr.To == t.Type:
			err = w.AddTensorFunc(t.Name, t.Type, t.Shape, d.writeTo)
		default:
			err = w.AddTensorFunc(t.Name, tr.To, t.Shape, func(dst io.Writer) error {
				return d.convert(dst, t, tr.To)
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

// hfData is one tensor's bytes: whole, or, for experts stacked from one
// HF tensor per expert, in parts (their concatenation is the tensor).
type hfData struct {
	whole []byte
	parts [][]byte
}

// writeTo writes the tensor's bytes.
func (d hfData) writeTo(w io.Writer) error {
	if d.parts == nil {
		_, err := w.Write(d.whole)
		return err
	}
	for _, p := range d.parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// convert writes the tensor t (whose bytes d holds) converted to type to,
// row by row as convertTensor does; a row never spans two parts (each
// part is whole rows).
func (d hfData) convert(dst io.Writer, t *gguf.TensorInfo, to gguf.Type) error {
	if d.parts == nil {
		return convertTensor(dst, t, d.whole, to)
	}
	ne0 := int(t.Shape[0])
	inRow, err := t.Type.RowBytes(ne0)
	if err != nil {
		return err
	}
	rows := int(t.Elements() / t.Shape[0])
	perPart := rows / len(d.parts)
	for _, p := range d.parts {
		if len(p) != perPart*inRow {
			return fmt.Errorf("an expert holds %d bytes, want %d", len(p), perPart*inRow)
		}
	}
	return WriteRows(dst, to, ne0, rows, func(r int, row []float32) error {
		p, at := d.parts[r/perPart], r%perPart
		return Decode(t.Type, p[at*inRow:(at+1)*inRow], row)
	})
}

// hfPlan is FromHF's tensor plan: h's tensors with norms and biases widened
// to F32 (their data in data, by name), and the report of what each
// becomes under opts (auto: the matrices keep their stored type).
func hfPlan(h *model.HFFolder, opts Options, auto bool) ([]gguf.TensorInfo, map[string]hfData, *Report, error) {
	c := h.Config
	tensors := make([]gguf.TensorInfo, len(h.Tensors))
	data := map[string]hfData{}
	for i, t := range h.Tensors {
		info, d := t.Info, t.Data
		if t.Parts != nil {
			tensors[i] = info
			data[info.Name] = hfData{parts: t.Parts}
			continue
		}
		if len(info.Shape) == 1 && info.Type != gguf.TypeF32 {
			f := make([]float32, info.Shape[0])
			if err := Decode(info.Type, d, f); err != nil {
				return nil, nil, nil, fmt.Errorf("convert: tensor %s: %w", info.Name, err)
			}
			d = make([]byte, 4*len(f))
			if err := Encode(gguf.TypeF32, f, d); err != nil {
				return nil, nil, nil, err
			}
			info.Type, info.Size = gguf.TypeF32, uint64(len(d))
		}
		tensors[i] = info
		data[info.Name] = hfData{whole: d}
	}
	if auto {
		opts.Scheme.FileType = FileTypeF32
		for _, t := range tensors {
			switch t.Type {
			case gguf.TypeF16:
				opts.Scheme.FileType = FileTypeF16
			case gguf.TypeBF16:
				opts.Scheme.FileType = FileTypeBF16
			}
		}
	}
	info := ModelInfo{Arch: c.Arch, Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads, Experts: c.Experts}
	rep, err := plan(info, tensors, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	return tensors, data, rep, nil
}

// LoadHF loads the Hugging Face folder dir quantized on load: each tensor
// converted exactly as FromHF converts it for opts (the same plan, mix
// rules and conversion code, in memory instead of into a file), then
// loaded as model.LoadHF loads a folder; so the model computes what
// model.Load computes on FromHF's GGUF. The report says what each tensor
// became (BytesOut: the weights' size in memory).
func LoadHF(dir string, opts Options, mopts model.Options) (*model.Model, *Report, error) {
	h, err := model.OpenHF(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: %w", err)
	}
	tensors, data, rep, err := hfPlan(h, opts, false)
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	byName := map[string]*gguf.TensorInfo{}
	for i := range tensors {
		byName[tensors[i].Name] = &tensors[i]
	}
	out := map[string]model.HFTensor{}
	for _, tr := range rep.Tensors {
		t, d := byName[tr.Name], data[tr.Name]
		info := *t
		if tr.To == t.Type {
			out[t.Name] = model.HFTensor{Info: info, Data: d.whole, Parts: d.parts}
			continue
		}
		buf := bytes.NewBuffer(make([]byte, 0, tr.Bytes)) // the exact size: no growth slack
		if err := d.convert(buf, t, tr.To); err != nil {
			h.Close()
			return nil, nil, fmt.Errorf("convert: tensor %s: %w", t.Name, err)
		}
		info.Type, info.Size = tr.To, uint64(buf.Len())
		out[t.Name] = model.HFTensor{Info: info, Data: buf.Bytes()}
	}
	for i := range h.Tensors {
		h.Tensors[i] = out[h.Tensors[i].Info.Name]
	}
	m, err := h.Load(mopts)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: %w", err)
	}
	return m, rep, nil
}

// hfMetadata is the general.* and {arch}.* metadata convert_hf_to_gguf.py
// writes (the same keys and types as synth.Spec.Metadata): integers
// uint32, floats float32; llama adds vocab_size and rope.dimension_count;
// key_length/value_length when config.json has head_dim; the expert keys
// of a mixture of experts.
func hfMetadata(h *model.HFFolder, name string, ft FileType) []gguf.KV {
	c := h.Config
	var kv []gguf.KV
	add := func(k string, v gguf.Value) { kv = append(kv, gguf.KV{Key: k, Value: v}) }
	u32 := func(k string, x int) { add(c.Arch+"."+k, gguf.Uint32Value(uint32(x))) }
	f32 := func(k string, x float32) { add(c.Arch+"."+k, gguf.Float32Value(x)) }
	add("general.architecture", gguf.StringValue(c.Arch))
	add("general.type", gguf.StringValue("model"))
	add("general.name", gguf.StringValue(name))
	u32("block_count", c.Layers)
	u32("context_length", c.Context) // max_position_embeddings (Mistral: its sliding window, as LoadHF runs it)
	u32("embedding_length", c.Dim)
	u32("feed_forward_length", c.FFN)
	u32("attention.head_count", c.Heads)
	u32("attention.head_count_kv", c.KVHeads)
	f32("rope.freq_base", c.RopeBase)
	f32("attention.layer_norm_rms_epsilon", c.NormEps) // olmoe: 1e-5, as the script overrides it (model.LoadHF refuses another)
	if c.MoE() {
		// TextModel's num_local_experts/num_experts and num_experts_per_tok;
		// Qwen2MoeModel's (and so Qwen3MoeModel's) moe_intermediate_size and
		// shared_expert_intermediate_size.
		u32("expert_count", c.Experts)
		u32("expert_used_count", c.ExpertsUsed)
		if c.Arch == "qwen2moe" || c.Arch == "qwen3moe" {
			u32("expert_feed_forward_length", c.ExpertFFN)
		}
		if c.SharedFFN > 0 {
			u32("expert_shared_feed_forward_length", c.SharedFFN)
		}
	}
	if h.HF.HeadDim != nil || c.HeadDim*c.Heads != c.Dim {
		u32("attention.key_length", c.HeadDim)
		u32("attention.value_length", c.HeadDim)
	}
	if c.RopeFreqScale != 1 {
		add(c.Arch+".rope.scaling.type", gguf.StringValue("linear"))
		f32("rope.scaling.factor", 1/c.RopeFreqScale)
	}
	add("general.file_type", gguf.Uint32Value(uint32(ft)))
	if c.Arch == "llama" {
		u32("vocab_size", c.Vocab)
		u32("rope.dimension_count", c.HeadDim)
	}
	add("general.quantization_version", gguf.Uint32Value(2))
	return kv
}
