package model

import "strings"

// Active weights of a mixture of experts: a token's FFN reads the router
// and ExpertsUsed of the Experts routed experts (plus a shared expert, if
// any), so what one token reads is every weight less the Experts -
// ExpertsUsed experts it did not choose. Parameter counts and the decode
// bandwidth model (kiln inspect, kiln bench) use these figures, not the
// totals.

// IsRoutedExpert reports whether a tensor holds routed experts' weights:
// a GGUF ffn_{gate,up,down}_exps tensor (all experts of a layer), or one
// expert's tensor of a Hugging Face folder (mlp.experts.E.*,
// block_sparse_moe.experts.E.*). The shared expert (ffn_*_shexp,
// mlp.shared_expert.*) and the routers are not.
func IsRoutedExpert(name string) bool {
	return strings.HasSuffix(name, "_exps.weight") || strings.Contains(name, ".experts.")
}

// Active is what one token reads of total (parameters or bytes), of which
// experts are the routed experts' (IsRoutedExpert): total less the
// unchosen share (Experts-ExpertsUsed)/Experts of experts. A dense
// model's is total.
func (c *Config) Active(total, experts uint64) uint64 {
	if !c.MoE() || experts > total {
		return total
	}
	return total - experts/uint64(c.Experts)*uint64(c.Experts-c.ExpertsUsed) -
		experts%uint64(c.Experts)*uint64(c.Experts-c.ExpertsUsed)/uint64(c.Experts)
}

// ExpertBytes is the size of the routed experts' weights as loaded: every
// expert's gate, up and down in every layer (0 for a dense model).
func (m *Model) ExpertBytes() uint64 {
	var n uint64
	for i := range m.Weights.Layers {
		for _, x := range m.Weights.Layers[i].Experts {
			n += uint64(len(x.Gate.Data) + len(x.Up.Data) + len(x.Down.Data))
		}
	}
	return n
}

// StepBytes bounds the weight bytes one decode step of seqs sequences
// reads, of total (the model's tensor data): everything but the routed
// experts once, and of each layer's experts at most min(Experts,
// seqs*ExpertsUsed), the most that seqs tokens can choose. Exact for one
// sequence (Active); for several, an upper bound (tokens that choose the
// same expert share its read). A dense model's is total.
func (m *Model) StepBytes(total uint64, seqs int) uint64 {
	c := &m.Config
	experts := m.ExpertBytes()
	if !c.MoE() || experts > total || seqs < 1 {
		return total
	}
	touched := uint64(min(c.Experts, seqs*c.ExpertsUsed))
	return total - experts + experts/uint64(c.Experts)*touched
}
