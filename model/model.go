package model

import (
	"fmt"
	"io"

	"kiln/gguf"
	"kiln/kernels"
)

// Options configure Load. The zero value is valid: all cores.
type Options struct {
	// Threads is the number of worker threads for matmuls and attention;
	// <= 0 means one per core.
	Threads int
	// NoRepack keeps every weight matrix in the file's layout (as
	// llama.cpp's --no-repack). By default Load rewrites the matrices that
	// have a load-time layout (kernels.Repack: Q8_0, Q4_0, Q4_K) into anonymous memory
	// the size of those matrices: decode and prefill then read panels as
	// they are instead of repacking them on every call (results are
	// unchanged, bit for bit).
	NoRepack bool
	// Pool, if set, is the worker pool to run on instead of a new one of
	// Threads workers (a draft model shares its target's: the two never
	// run at once, and the cores are not oversubscribed). The caller
	// closes it after every model on it; Close leaves it running.
	Pool *kernels.Pool
}

// Model is a loaded transformer ready to run Forward. Its weights point into
// the GGUF mapping, so the file must stay open while the model is used.
// Forward is not safe for concurrent use: one engine loop drives it.
type Model struct {
	Config  Config
	Weights *Weights

	pool    *kernels.Pool
	ownPool bool      // Close closes pool (not Options.Pool)
	files   io.Closer // the safetensors mapping LoadHF opened; nil for Load
	rope    kernels.RoPE
	scratch scratch
}

// Load reads the configuration and maps the weights of f.
func Load(f *gguf.File, opts Options) (*Model, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	w, err := loadWeights(f, &cfg)
	if err != nil {
		return nil, err
	}
	return newModel(cfg, w, opts, f.Evict)
}

// newModel sets up RoPE and the worker pool for loaded weights and repacks
// the matrices that have a load-time layout, calling evict on the source
// bytes of each one repacked (its pages are not read again).
func newModel(cfg Config, w *Weights, opts Options, evict func([]byte)) (*Model, error) {
	m := &Model{Config: cfg, Weights: w}
	m.rope = cfg.ropeKernel(w.RopeFreqs)
	if err := m.rope.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m.pool, m.ownPool = opts.Pool, opts.Pool == nil
	if m.ownPool {
		m.pool = kernels.NewPool(opts.Threads)
	}
	if !opts.NoRepack {
		// One matrix at a time, and the file's pages of its rows leave the
		// resident set right after (they are not read again, but for a last
		// partial panel, which faults its pages back in): resident memory
		// stays about one copy of the weights, during the load too. The
		// embedding table (tied output) is read row by row and keeps its
		// pages.
		for _, w := range m.matrices() {
			if err := m.pool.Repack(w); err != nil {
				kernels.Unpack(m.matrices()...)
				if m.ownPool {
					m.pool.Close()
				}
				return nil, fmt.Errorf("model: %w (Options.NoRepack loads without repacking)", err)
			}
			if w.Repacked() && !(cfg.Tied && w == &m.Weights.Output) {
				evict(w.Data)
			}
		}
	}
	return m, nil
}

// matrices lists the weight matrices MatMul multiplies (not the embedding
// table, which is only read row by row, even when tied to the output):
// the output, then per layer Q, K, V, O, and gate, up, down (dense) or the
// router and each expert's gate, up, down (mixture of experts).
func (m *Model) matrices() []*kernels.Matrix {
	w := m.Weights
	ms := []*kernels.Matrix{&w.Output}
	for i := range w.Layers {
		ly := &w.Layers[i]
		ms = append(ms, &ly.Q, &ly.K, &ly.V, &ly.O)
		if ly.Experts == nil {
			ms = append(ms, &ly.Gate, &ly.Up, &ly.Down)
			continue
		}
		ms = append(ms, &ly.Router)
		for e := range ly.Experts {
			x := &ly.Experts[e]
			ms = append(ms, &x.Gate, &x.Up, &x.Down)
		}
	}
	return ms
}

// Close stops the model's worker threads and frees repacked weights.
func (m *Model) Close() {
	if m.ownPool {
		m.pool.Close()
	} else {
		m.pool.Forget() // the pool lives on: it must not prefetch freed weights
	}
	kernels.Unpack(m.matrices()...)
	if m.files != nil {
		m.files.Close()
		m.files = nil
	}
}

// Pool is m's worker pool (Options.Pool shares it with another model).
func (m *Model) Pool() *kernels.Pool { return m.pool }

// Threads is the number of worker threads Forward uses.
func (m *Model) Threads() int { return m.pool.Threads() }
