package model

import (
	"fmt"

	"kiln/gguf"
	"kiln/kernels"
)

// Options configure Load. The zero value is valid: all cores.
type Options struct {
	// Threads is the number of worker threads for matmuls and attention;
	// <= 0 means one per core.
	Threads int
}

// Model is a loaded transformer ready to run Forward. Its weights point into
// the GGUF mapping, so the file must stay open while the model is used.
// Forward is not safe for concurrent use: one engine loop drives it.
type Model struct {
	Config  Config
	Weights *Weights

	pool    *kernels.Pool
	rope    kernels.RoPE
	scratch scratch
}

// Load reads the configuration and maps the weights of f.
func Load(f *gguf.File, opts Options) (*Model, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	for i := 0; i < cfg.Layers; i++ {
		if _, ok := f.Tensor(fmt.Sprintf("blk.%d.ffn_gate_inp.weight", i)); ok {
			return nil, fmt.Errorf("model: %s mixture-of-experts layers (blk.%d.ffn_gate_inp) are not supported", cfg.Arch, i)
		}
	}
	w, err := loadWeights(f, &cfg)
	if err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, Weights: w}
	m.rope = kernels.RoPE{
		HeadDim:     cfg.HeadDim,
		Base:        cfg.RopeBase,
		FreqScale:   cfg.RopeFreqScale,
		FreqFactors: w.RopeFreqs,
		Neox:        cfg.RopeNeox,
	}
	if err := m.rope.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m.pool = kernels.NewPool(opts.Threads)
	return m, nil
}

// Close stops the model's worker threads.
func (m *Model) Close() { m.pool.Close() }

// Threads is the number of worker threads Forward uses.
func (m *Model) Threads() int { return m.pool.Threads() }
