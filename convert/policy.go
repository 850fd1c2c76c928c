package convert

import (
	"fmt"
	"sort"
	"strings"

	"kiln/gguf"
)

// ModelInfo is what llama-quantize's mix rules read from a model besides
// tensor names: the architecture and layer count (for per-layer rules) and
// the head counts (n_gqa = Heads/KVHeads, and the Llama 70B special case).
type ModelInfo struct {
	Arch    string // general.architecture ("llama", "qwen2", "falcon", ...)
	Layers  int    // {arch}.block_count
	Heads   int    // {arch}.attention.head_count
	KVHeads int    // {arch}.attention.head_count_kv (0: same as Heads)
	Experts int    // {arch}.expert_count (0: a dense model)
}

func (m ModelInfo) gqa() int {
	kv := m.KVHeads
	if kv == 0 {
		kv = m.Heads
	}
	if kv <= 0 {
		return 0
	}
	return m.Heads / kv
}

// is70B mirrors LLM_TYPE_70B: a llama with 80 layers and grouped KV heads.
func (m ModelInfo) is70B() bool {
	return m.Arch == "llama" && m.Layers == 80 && m.KVHeads != 0 && m.Heads != m.KVHeads
}

// category is llama-quant.cpp's tensor_category: what the mix rules key on.
type category int

const (
	catOther category = iota
	catTokenEmbd
	catAttnQ
	catAttnK
	catAttnV // attn_v, and the fused attn_qkv / attn_kv_b that contain it
	catAttnQKV
	catAttnKVB
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
	catOutput
)

func categorize(name string) category {
	switch {
	case name == "output.weight":
		return catOutput
	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		return catTokenEmbd
	case strings.Contains(name, "attn_qkv.weight"):
		return catAttnQKV
	case strings.Contains(name, "attn_kv_b.weight"):
		return catAttnKVB
	case strings.Contains(name, "attn_v.weight"):
		return catAttnV
	case strings.Contains(name, "attn_k.weight"):
		return catAttnK
	case strings.Contains(name, "attn_q.weight"):
		return catAttnQ
	case strings.Contains(name, "attn_output.weight"):
		return catAttnOutput
	case strings.Contains(name, "ffn_up"):
		return catFFNUp
	case strings.Contains(name, "ffn_gate"):
		return catFFNGate
	case strings.Contains(name, "ffn_down"):
		return catFFNDown
	}
	return catOther
}

func (c category) isAttnV() bool { return c == catAttnV || c == catAttnQKV || c == catAttnKVB }

// nDims is ggml_n_dims: the number of dimensions up to the last one above 1.
func nDims(shape []uint64) int {
	n := 1
	for i, d := range shape {
		if d > 1 {
			n = i + 1
		}
	}
	return n
}

// notQuantized lists name fragments llama-quantize never quantizes
// (tensor_allows_quantization): router and small auxiliary weights.
var notQuantized = []string{
	"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
	"per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight",
	"indexer.k_proj.weight", "indexer.q_proj.weight",
	"time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
	"time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
	"time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
	"time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
	"attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos",
	".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
}

// Quantizable reports whether llama-quantize would change the type of a
// tensor with this name and shape at all: two or more dimensions (trailing
// 1s not counted), a name ending in "weight", and not a norm, router,
// positional embedding or one of a few small auxiliary weights.
func Quantizable(name string, shape []uint64) bool {
	if nDims(shape) < 2 || !strings.HasSuffix(name, "weight") {
		return false
	}
	if name == "position_embd.weight" || name == "token_types.weight" {
		return false
	}
	for _, frag := range notQuantized {
		if strings.Contains(name, frag) {
			return false
		}
	}
	return true
}

// layerOf parses "blk.N." as sscanf(name, "blk.%d.") does; -1 when absent.
func layerOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	n, digits := 0, 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' && n < 1<<24 {
		n = n*10 + int(rest[digits]-'0')
		digits++
	}
	if digits == 0 {
		return -1
	}
	return n
}

// LlamaOrder returns the indices of tensors in the order llama.cpp's model
// loader keeps them (weights_map with weight_name_comparer): tensors outside
// blocks first, then blocks by layer number, by name within each group.
// llama-quantize writes its output in this order and counts layers in it.
func LlamaOrder(names []string) []int {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		na, nb := names[idx[a]], names[idx[b]]
		la, lb := layerOf(na), layerOf(nb)
		if la != lb {
			return la < lb
		}
		return na < nb
	})
	return idx
}

// useMoreBits is llama-quant.cpp's use_more_bits: the first and last eighth
// of the layers, and every third layer in between.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// chooser carries llama-quantize's quantize_state_impl counters.
type chooser struct {
	m                     ModelInfo
	ft                    FileType
	tied                  bool // no output.weight: token_embd doubles as the output matrix
	nAttnV, iAttnV, iDown int
}

// ChooseTypes returns the type each tensor gets when a model is written as
// scheme s, as llama-quantize picks it (llama_tensor_get_type): tensors that
// are not Quantizable keep their current Type; F32/F16/BF16 file types give
// every quantizable tensor that type; quantized file types apply the mix
// rules unless s.Pure, then fall back when a row is not a whole number of
// blocks (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K/Q3_K -> Q4_0, and
// F16 when even that does not fit). A row that no fallback covers (e.g. 100
// columns in Q4_0) is an error, as it is in llama-quantize.
func ChooseTypes(m ModelInfo, tensors []gguf.TensorInfo, s Scheme) ([]gguf.Type, error) {
	if !s.FileType.Known() {
		return nil, fmt.Errorf("convert: unknown file type %d", uint32(s.FileType))
	}
	base := s.FileType.Base()
	names := make([]string, len(tensors))
	c := &chooser{m: m, ft: s.FileType, tied: true}
	for i, t := range tensors {
		names[i] = t.Name
		cat := categorize(t.Name)
		if cat.isAttnV() {
			c.nAttnV++
		}
		if cat == catOutput {
			c.tied = false
		}
	}
	out := make([]gguf.Type, len(tensors))
	for _, i := range LlamaOrder(names) {
		t := tensors[i]
		if !Quantizable(t.Name, t.Shape) {
			out[i] = t.Type
			continue
		}
		typ := base
		if isQuantized(base) {
			if !s.Pure {
				typ = c.mix(t.Name, categorize(t.Name), base, t.Shape[0])
			}
			var err error
			if typ, err = fallback(t.Name, t.Shape[0], typ); err != nil {
				return nil, err
			}
		}
		out[i] = typ
	}
	return out, nil
}

// isQuantized is ggml_is_quantized for the types this package writes.
func isQuantized(t gguf.Type) bool {
	return t != gguf.TypeF32 && t != gguf.TypeF16 && t != gguf.TypeBF16
}

// mix is llama_tensor_get_type_impl for the file types of this package
// (the IQ branches are not reachable; of the MoE rules, those of
// n_expert == 8: attn_v and attn_k to Q8_0, attn_output to Q5_K).
func (c *chooser) mix(name string, cat category, typ gguf.Type, ncols uint64) gguf.Type {
	ft := c.ft
	switch {
	case cat == catOutput || (c.tied && cat == catTokenEmbd):
		if c.m.Arch == "falcon" || ncols%uint64(typ.BlockSize()) != 0 {
			typ = gguf.TypeQ8_0
		} else if typ != gguf.TypeQ8_0 {
			typ = gguf.TypeQ6_K
		}
	case cat == catTokenEmbd:
		// Keeps the base type for every file type of this package.
	case cat.isAttnV():
		switch {
		case ft == FileTypeQ2_K:
			typ = gguf.TypeQ3_K
			if c.m.gqa() >= 4 {
				typ = gguf.TypeQ4_K
			}
		case ft == FileTypeQ3_KM:
			typ = gguf.TypeQ4_K
			if c.iAttnV < 2 {
				typ = gguf.TypeQ5_K
			}
		case ft == FileTypeQ3_KL:
			typ = gguf.TypeQ5_K
		case (ft == FileTypeQ4_KM || ft == FileTypeQ5_KM) && useMoreBits(c.iAttnV, c.nAttnV):
			typ = gguf.TypeQ6_K
		case ft == FileTypeQ4_KS && c.iAttnV < 4:
			typ = gguf.TypeQ5_K
		}
		if c.m.is70B() && (typ == gguf.TypeQ3_K || typ == gguf.TypeQ4_K) {
			typ = gguf.TypeQ5_K
		}
		if c.m.Experts == 8 {
			// llama.cpp: "for the 8-expert model, bumping this to Q8_0
			// trades just ~128MB" (Mixtral, and any 8-expert MoE).
			typ = gguf.TypeQ8_0
		}
		c.iAttnV++
	case cat == catAttnK:
		if c.m.Experts == 8 {
			typ = gguf.TypeQ8_0
		}
	case cat == catFFNDown:
		i, n := c.iDown, c.m.Layers
		falcon := c.m.Arch == "falcon"
		switch {
		case ft == FileTypeQ2_K:
			typ = gguf.TypeQ3_K
		case ft == FileTypeQ3_KM:
			switch {
			case i < n/16:
				typ = gguf.TypeQ5_K
			case !falcon || useMoreBits(i, n):
				typ = gguf.TypeQ4_K
			default:
				typ = gguf.TypeQ3_K
			}
		case ft == FileTypeQ3_KL:
			typ = gguf.TypeQ5_K
			if falcon {
				typ = gguf.TypeQ4_K
			}
		case ft == FileTypeQ4_KM:
			if falcon {
				switch {
				case i < n/16:
					typ = gguf.TypeQ6_K
				case useMoreBits(i, n):
					typ = gguf.TypeQ5_K
				default:
					typ = gguf.TypeQ4_K
				}
			} else if useMoreBits(i, n) {
				typ = gguf.TypeQ6_K
			}
		case ft == FileTypeQ5_KM && useMoreBits(i, n):
			typ = gguf.TypeQ6_K
		case ft == FileTypeQ4_KS && !falcon && i < n/8:
			typ = gguf.TypeQ5_K
		}
		c.iDown++
	case cat == catAttnOutput:
		if c.m.Arch != "falcon" && c.m.Experts == 8 {
			switch ft {
			case FileTypeQ2_K, FileTypeQ3_KS, FileTypeQ3_KM, FileTypeQ4_KS, FileTypeQ4_KM:
				typ = gguf.TypeQ5_K
			}
		} else if c.m.Arch != "falcon" {
			switch ft {
			case FileTypeQ2_K:
				typ = gguf.TypeQ3_K
			case FileTypeQ3_KM:
				typ = gguf.TypeQ4_K
			case FileTypeQ3_KL:
				typ = gguf.TypeQ5_K
			}
		} else if ft == FileTypeQ3_KL {
			typ = gguf.TypeQ4_K
		}
	case cat == catAttnQKV:
		switch ft {
		case FileTypeQ3_KM, FileTypeQ3_KL:
			typ = gguf.TypeQ4_K
		case FileTypeQ4_KM:
			typ = gguf.TypeQ5_K
		case FileTypeQ5_KM:
			typ = gguf.TypeQ6_K
		}
	}
	return typ
}

// fallback is tensor_type_fallback: a type whose block does not divide the
// row length is replaced by one whose block does.
func fallback(name string, ncols uint64, typ gguf.Type) (gguf.Type, error) {
	if ncols%uint64(typ.BlockSize()) == 0 {
		return typ, nil
	}
	var alt gguf.Type
	switch typ {
	case gguf.TypeQ2_K, gguf.TypeQ3_K:
		alt = gguf.TypeQ4_0
	case gguf.TypeQ4_K:
		alt = gguf.TypeQ5_0
	case gguf.TypeQ5_K:
		alt = gguf.TypeQ5_1
	case gguf.TypeQ6_K:
		alt = gguf.TypeQ8_0
	default:
		return 0, fmt.Errorf("convert: tensor %s has rows of %d elements, not a multiple of %s's block size %d, and llama-quantize defines no fallback for %s: choose another type",
			name, ncols, typ, typ.BlockSize(), typ)
	}
	if ncols%uint64(alt.BlockSize()) != 0 {
		alt = gguf.TypeF16
	}
	return alt, nil
}
