package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"kiln/convert"
	"kiln/gguf"
	"kiln/model"
	"kiln/safetensors"
	"kiln/tokenizer"
)

// A Hugging Face folder of a synthetic model holds the same weights as its
// GGUF, under the names and layout a checkpoint uses (model.HFTensorNames,
// the mapping model.LoadHF reads back):
//
//	config.json             architecture and hyperparameters of the Spec
//	model.safetensors       or model-0000i-of-0000n.safetensors + index,
//	                        shards of at most hfShardBytes
//	tokenizer.json,         the vocabulary as transformers' converters
//	tokenizer_config.json   write it (tokenizer.Vocab.HFFiles)
//	generation_config.json  BOS and EOS ids
//
// A matrix of HF shape [rows][cols] is the GGUF tensor [cols, rows], row
// for row, except llama's q/k projections: HF keeps each head's rows in
// rotate_half order, GGUF interleaves them (convert_hf_to_gguf.py's
// permute), so HF row h*hd + s*hd/2 + j is GGUF row h*hd + 2j + s, drawn
// from that row's random stream. rope_freqs.weight is not written:
// config.json's rope_scaling says the same (LoadHF computes it again).

// hfShardBytes is the largest safetensors file WriteHF writes (about
// transformers' max_shard_size of 5 GB).
const hfShardBytes = 5_000_000_000

var hfArchitectures = map[string]string{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
	"qwen3moe": "Qwen3MoeForCausalLM", "qwen2moe": "Qwen2MoeForCausalLM", "olmoe": "OlmoeForCausalLM"}

// hfModelTypes are config.json's model_type where it is not the arch.
var hfModelTypes = map[string]string{"qwen3moe": "qwen3_moe", "qwen2moe": "qwen2_moe"}

var hfDTypes = map[gguf.Type]safetensors.DType{gguf.TypeF32: "F32", gguf.TypeF16: "F16", gguf.TypeBF16: "BF16"}

// WriteHF writes the model as a Hugging Face folder at dir (created; it
// must not exist or be empty). Its tensors must be F32, F16 or BF16, the
// types a checkpoint holds; model.LoadHF of the folder computes what
// model.Load of WriteFile's GGUF computes.
//
// The files are written to a temporary folder beside dir, renamed to dir
// at the end (rename(2) replaces an empty folder), so a failed or
// interrupted run leaves no half-written model at dir; the temporary
// folder is removed on failure.
func (m *Model) WriteHF(dir string) error { return m.writeHF(dir, hfShardBytes) }

func (m *Model) writeHF(dir string, shardBytes uint64) (err error) {
	if _, ok := hfArchitectures[m.Spec.Arch]; !ok {
		return fmt.Errorf("synth: the Hugging Face format is not written for %s models", m.Spec.Arch)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("synth: %s exists and is not empty", dir)
	}
	dir = filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err = m.writeHFFiles(tmp, shardBytes); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if err = os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

// writeHFFiles writes the folder's files into dir, which exists.
func (m *Model) writeHFFiles(dir string, shardBytes uint64) error {
	for i, t := range m.Tensors {
		if _, ok := hfDTypes[m.Types[i]]; !ok {
			return fmt.Errorf("synth: a Hugging Face folder holds F32, F16 or BF16 weights; %s would be %s (--type %s)", t.Name, m.Types[i], m.Scheme)
		}
	}
	v, err := tokenizer.VocabFromMeta(kvMeta(m.Vocab.KV))
	if err != nil {
		return fmt.Errorf("synth: vocabulary: %w", err)
	}
	tj, tc, err := v.HFFiles()
	if err != nil {
		return fmt.Errorf("synth: vocabulary as tokenizer.json: %w", err)
	}
	write := func(name string, data []byte) error {
		return os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	cfg, err := json.MarshalIndent(m.hfConfig(v), "", "  ")
	if err != nil {
		return err
	}
	gen, err := json.MarshalIndent(map[string]any{"bos_token_id": nullID(v.BOS), "eos_token_id": nullID(v.EOS)}, "", "  ")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"config.json", cfg}, {"generation_config.json", gen}, {"tokenizer.json", tj}, {"tokenizer_config.json", tc}} {
		if err := write(f.name, f.data); err != nil {
			return err
		}
	}
	// The tensors as LoadHF will look for them, from config.json as it reads it.
	c, _, _, err := model.ConfigFromHF(dir)
	if err != nil {
		return fmt.Errorf("synth: the config.json written: %w", err)
	}
	ts, err := m.hfTensors(c)
	if err != nil {
		return err
	}
	return writeShards(dir, ts, shardBytes)
}

// hfConfig is config.json for the model, as transformers writes it.
func (m *Model) hfConfig(v *tokenizer.Vocab) map[string]any {
	s := m.Spec
	dtype := map[convert.FileType]string{convert.FileTypeF16: "float16", convert.FileTypeBF16: "bfloat16"}[m.Scheme.FileType]
	if dtype == "" {
		dtype = "float32"
	}
	arch, modelType := hfArchitectures[s.Arch], s.Arch
	if t, ok := hfModelTypes[s.Arch]; ok {
		modelType = t
	}
	if s.Arch == "llama" && s.Experts > 0 {
		arch, modelType = "MixtralForCausalLM", "mixtral"
	}
	cfg := map[string]any{
		"architectures":           []string{arch},
		"model_type":              modelType,
		"hidden_size":             s.Dim,
		"intermediate_size":       s.FFN,
		"num_hidden_layers":       s.Layers,
		"num_attention_heads":     s.Heads,
		"num_key_value_heads":     s.KVHeads,
		"head_dim":                s.HeadDim,
		"vocab_size":              s.VocabSize,
		"max_position_embeddings": s.Ctx,
		"rms_norm_eps":            s.NormEps,
		"rope_theta":              s.RopeTheta,
		"rope_scaling":            nil,
		"tie_word_embeddings":     s.Tied,
		"hidden_act":              "silu",
		"torch_dtype":             dtype,
		"bos_token_id":            nullID(v.BOS),
		"eos_token_id":            nullID(v.EOS),
	}
	if r := s.RopeScaling; r != nil {
		cfg["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": r.Factor, "low_freq_factor": r.LowFreqFactor,
			"high_freq_factor": r.HighFreqFactor, "original_max_position_embeddings": r.OriginalContext}
	}
	if s.Arch != "llama" {
		cfg["use_sliding_window"] = false
	}
	if s.Experts > 0 {
		m.hfExpertConfig(cfg)
	}
	return cfg
}

// hfExpertConfig adds the mixture-of-experts keys of config.json as
// transformers' MixtralConfig, Qwen2MoeConfig, Qwen3MoeConfig and
// OlmoeConfig name them. Like the real checkpoints' configs, only Qwen3's
// carries head_dim (when heads*head_dim is hidden_size).
func (m *Model) hfExpertConfig(cfg map[string]any) {
	s := m.Spec
	if s.Arch != "qwen3moe" && s.HeadDim*s.Heads == s.Dim {
		delete(cfg, "head_dim")
	}
	cfg["num_experts_per_tok"] = s.ExpertsUsed
	switch s.Arch {
	case "llama": // Mixtral
		cfg["num_local_experts"] = s.Experts
		cfg["sliding_window"] = nil
	case "olmoe":
		cfg["num_experts"] = s.Experts
		cfg["norm_topk_prob"] = false
		cfg["clip_qkv"] = nil
	default: // qwen2moe, qwen3moe
		cfg["num_experts"] = s.Experts
		cfg["moe_intermediate_size"] = s.ExpertFFN
		cfg["norm_topk_prob"] = s.Arch == "qwen3moe"
		cfg["decoder_sparse_step"] = 1
		cfg["mlp_only_layers"] = []int{}
		if s.Arch == "qwen2moe" {
			cfg["shared_expert_intermediate_size"] = s.SharedFFN
		}
	}
}

// nullID is an id for JSON: -1 (none) is null.
func nullID(id int32) any {
	if id < 0 {
		return nil
	}
	return id
}

// hfTensors lists the model's tensors under their HF names, each
// generated as it is written.
func (m *Model) hfTensors(c model.Config) ([]safetensors.WriteTensor, error) {
	index := map[string]int{}
	for i, t := range m.Tensors {
		index[t.Name] = i
	}
	var ts []safetensors.WriteTensor
	for _, n := range model.HFTensorNames(c) {
		i, ok := index[n.GGUF]
		if !ok {
			return nil, fmt.Errorf("synth: the folder needs %s (%s), which the model lacks", n.HF, n.GGUF)
		}
		delete(index, n.GGUF)
		t, typ := &m.Tensors[i], m.Types[i]
		rows, cols := t.Rows(), int(t.Shape[0])
		elems := 1
		shape := make([]uint64, len(n.Shape))
		for k, d := range n.Shape {
			shape[k] = uint64(d)
			elems *= d
		}
		if elems != rows*cols {
			return nil, fmt.Errorf("synth: %s has %d×%d elements, the folder's %s wants shape %v", t.Name, rows, cols, n.HF, n.Shape)
		}
		heads := n.Permute
		if heads > 0 && (rows%heads != 0 || (rows/heads)%2 != 0) {
			return nil, fmt.Errorf("synth: %s: %d rows do not split into %d heads of even size", t.Name, rows, heads)
		}
		key := tensorKey(m.Seed, t.Name)
		if n.Parts != nil {
			// A 3-D expert tensor: expert e's matrix is the next rows/E
			// GGUF rows, stored as its own HF tensor.
			per := rows / len(n.Parts)
			for e, name := range n.Parts {
				first := e * per
				ts = append(ts, safetensors.WriteTensor{Name: name, DType: hfDTypes[typ], Shape: shape[1:], Fill: func(w io.Writer) error {
					return convert.WriteRows(w, typ, cols, per, func(r int, dst []float32) error {
						t.fillRow(key, first+r, dst)
						return nil
					})
				}})
			}
			continue
		}
		ts = append(ts, safetensors.WriteTensor{Name: n.HF, DType: hfDTypes[typ], Shape: shape, Fill: func(w io.Writer) error {
			return convert.WriteRows(w, typ, cols, rows, func(r int, dst []float32) error {
				src := r
				if heads > 0 { // HF row h*hd + s*hd/2 + j is GGUF row h*hd + 2j + s
					hd := rows / heads
					h, in := r/hd, r%hd
					src = h*hd + 2*(in%(hd/2)) + in/(hd/2)
				}
				t.fillRow(key, src, dst)
				return nil
			})
		}})
	}
	delete(index, "rope_freqs.weight") // config.json's rope_scaling
	if len(index) > 0 {
		return nil, fmt.Errorf("synth: %d tensors (such as %s) have no place in a Hugging Face folder", len(index), slices.Sorted(maps.Keys(index))[0])
	}
	return ts, nil
}

// writeShards writes ts as model.safetensors, or, past shardBytes, as
// numbered shards with model.safetensors.index.json.
func writeShards(dir string, ts []safetensors.WriteTensor, shardBytes uint64) error {
	var shards [][]safetensors.WriteTensor
	var size, total uint64
	for _, t := range ts {
		n := t.DType.Size()
		for _, d := range t.Shape {
			n *= d
		}
		if len(shards) == 0 || (size > 0 && size+n > shardBytes) {
			shards = append(shards, nil)
			size = 0
		}
		shards[len(shards)-1] = append(shards[len(shards)-1], t)
		size += n
		total += n
	}
	meta := map[string]string{"format": "pt"}
	if len(shards) == 1 {
		return safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), meta, shards[0])
	}
	weights := map[string]string{}
	for i, part := range shards {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(shards))
		if err := safetensors.WriteFile(filepath.Join(dir, name), meta, part); err != nil {
			return err
		}
		for _, t := range part {
			weights[t.Name] = name
		}
	}
	idx, err := json.MarshalIndent(map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weights}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, safetensors.IndexName), idx, 0o644)
}

// kvMeta serves tokenizer.VocabFromMeta from a list of metadata pairs.
type kvMeta []gguf.KV

func (m kvMeta) value(key string) (gguf.Value, bool) {
	for _, kv := range m {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return gguf.Value{}, false
}

func (m kvMeta) String(key string) (string, bool) {
	v, ok := m.value(key)
	if !ok {
		return "", false
	}
	return v.String()
}

func (m kvMeta) Strings(key string) ([]string, bool) {
	v, ok := m.value(key)
	if !ok {
		return nil, false
	}
	return v.Strings()
}

func (m kvMeta) Float32s(key string) ([]float32, bool) {
	v, ok := m.value(key)
	if !ok {
		return nil, false
	}
	return v.Float32s()
}

func (m kvMeta) Int32s(key string) ([]int32, bool) {
	v, ok := m.value(key)
	if !ok {
		return nil, false
	}
	return v.Int32s()
}

func (m kvMeta) Uint(key string) (uint64, bool) {
	v, ok := m.value(key)
	if !ok {
		return 0, false
	}
	return v.Uint()
}

func (m kvMeta) Bool(key string) (bool, bool) {
	v, ok := m.value(key)
	if !ok {
		return false, false
	}
	return v.Bool()
}
