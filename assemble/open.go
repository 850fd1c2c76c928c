package assemble

import (
	"kiln/convert"
	"kiln/engine"
	"kiln/gguf"
	"kiln/model"
	"kiln/tokenizer"
)

// Options says which model files to open and how.
type Options struct {
	// Model is a GGUF file or a Hugging Face folder (hf: references are
	// resolved by the caller).
	Model string
	// Scheme quantizes a Hugging Face folder (the model or the draft) on
	// load, as kiln convert --type would write it; nil loads it as it is.
	// GGUF files are used as they are (kiln quantize rewrites one).
	Scheme *convert.Scheme
	// Draft is the draft model of speculative decoding (a GGUF file or a
	// folder, on the model's worker pool), "" for none. Its vocabulary
	// must be the model's (a DraftError otherwise).
	Draft string
	// Threads is the worker pool's size (0: one per core); NoRepack
	// keeps the weights in their file layout (model.Options).
	Threads  int
	NoRepack bool
	// NoTokenizer loads the weights alone: Assembly.Tokenizer stays nil
	// and the draft is checked on its vocabulary size only (callers that
	// feed token ids).
	NoTokenizer bool
}

// Assembly is what Open built: it owns the model, its mapping, the draft
// and the engine, and Close releases them all.
type Assembly struct {
	Model     *model.Model
	Tokenizer *tokenizer.Tokenizer // nil with Options.NoTokenizer
	Draft     *model.Model         // nil without Options.Draft
	// WeightBytes is the model's weights' size: a GGUF's tensor data, a
	// folder's *.safetensors files, or its tensors as quantized on load.
	WeightBytes uint64

	Engine    *engine.Engine // set by Start
	NumBlocks int            // the KV pool Start sized: blocks of BlockSize token slots
	BlockSize int
	// BlockBytes is the bytes one block id takes in the model's KV store
	// and the draft's.
	BlockBytes int

	file  *gguf.File
	draft *weights
}

// Open loads the models (Load) and starts their engine (Start).
func Open(o Options, kv KV, cfg engine.Config) (*Assembly, error) {
	a, err := Load(o)
	if err != nil {
		return nil, err
	}
	if _, err := a.Start(kv, cfg); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Load loads the model, its tokenizer and the draft, without an engine.
func Load(o Options) (*Assembly, error) {
	w, err := loadWeights(o.Model, o.Scheme, model.Options{Threads: o.Threads, NoRepack: o.NoRepack}, !o.NoTokenizer)
	if err != nil {
		return nil, err
	}
	a := &Assembly{Model: w.model, Tokenizer: w.tok, WeightBytes: w.bytes, file: w.file}
	if o.Draft != "" {
		d, err := loadDraft(o.Draft, w.model, w.tok, o.Scheme)
		if err != nil {
			w.close()
			return nil, err
		}
		a.draft, a.Draft = d, d.model
	}
	return a, nil
}

// KVModels are the configurations whose KV one block id holds: the
// model's, then the draft's if any.
func (a *Assembly) KVModels() []*model.Config {
	if a.Draft != nil {
		return []*model.Config{&a.Model.Config, &a.Draft.Config}
	}
	return []*model.Config{&a.Model.Config}
}

// Start sizes the KV pool (a *PoolError when the budget does not hold
// one sequence) and starts the engine with cfg, its NumBlocks and
// BlockSize set from kv and, with a draft, its Spec.Draft. cfg's other
// fields (Tokenizer included) are the caller's. A second Start is a bug.
func (a *Assembly) Start(kv KV, cfg engine.Config) (*engine.Engine, error) {
	if a.Engine != nil {
		panic("assemble: Start called twice")
	}
	n, err := kv.numBlocks(a.KVModels(), cfg.KVStoreType())
	if err != nil {
		return nil, err
	}
	cfg.NumBlocks, cfg.BlockSize = n, kv.BlockSize
	if a.Draft != nil {
		cfg.Spec.Draft = a.Draft
	}
	e, err := engine.New(a.Model, cfg)
	if err != nil {
		return nil, err
	}
	a.Engine, a.NumBlocks, a.BlockSize = e, n, kv.BlockSize
	a.BlockBytes = blockBytes(a.KVModels(), kv.BlockSize, cfg.KVStoreType())
	return e, nil
}

// KVBytes is the KV pool's size in bytes (0 before Start).
func (a *Assembly) KVBytes() int64 { return int64(a.NumBlocks) * int64(a.BlockBytes) }

// Close stops the engine (its requests end) and then releases the draft,
// the model and the mapping, in that order: the engine runs on them. A
// second Close does nothing.
func (a *Assembly) Close() {
	if a.Engine != nil {
		a.Engine.Close()
		a.Engine = nil
	}
	if a.draft != nil {
		a.draft.close()
		a.draft, a.Draft = nil, nil
	}
	if a.Model != nil {
		a.Model.Close()
		a.Model = nil
	}
	if a.file != nil {
		a.file.Close()
		a.file = nil
	}
}
