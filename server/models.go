package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"kiln/chat"
	"kiln/engine"
	"kiln/grammar"
	"kiln/hub"
	"kiln/tokenizer"
)

// Model is a loaded model, ready to serve: what a Loader returns.
type Model struct {
	Engine      *engine.Engine
	Tokenizer   *tokenizer.Tokenizer
	Template    *chat.Template // the model's chat template (chat.Compile("") renders ChatML when it has none)
	MaxModelLen int            // context per request, tokens
	MaxSeqs     int            // the engine's running requests at most (bounds n)
	BlockSize   int            // KV block, tokens
	NumBlocks   int            // KV pool, blocks
	PrefixCache bool           // the engine caches prompt prefixes (vllm:cache_config_info)
	CacheDtype  string         // KV element type, "f16", "q8_0", ... (vllm:cache_config_info's cache_dtype; "" reports "auto")
	SpecTokens  int            // drafted tokens per step when the engine speculates (0: it does not)
	Pooling     string         // /v1/embeddings' pooling (PoolLast, PoolMean, PoolCLS); "" means PoolLast
	Bytes       int64          // memory it holds (weights and KV pool), for Config.MemoryBudget
	Close       func()         // releases the weights; the engine is closed first
}

// Loader loads the model at path (a GGUF file or a Hugging Face folder),
// named name in the API and the metrics.
type Loader func(ctx context.Context, name, path string) (*Model, error)

// Source is an operator-allowed model: a name requests may use and the
// path it loads.
type Source struct {
	Name, Path string
}

// slot is one model's place in the registry, loading or loaded.
type slot struct {
	name  string        // the name it is served and labelled as
	path  string        // what was loaded
	ready chan struct{} // closed when loading ended (m or err set)
	m     *Model
	err   error

	refs     int       // requests holding it
	lastUsed time.Time // when refs last fell to 0
	timer    *time.Timer
	created  time.Time

	vocabOnce sync.Once // the vocabulary as bytes, for structured output
	vocab     *grammar.Vocabulary
	vocabErr  error
}

// registry resolves model names and loads, shares and unloads models.
type registry struct {
	load      Loader
	keepAlive time.Duration
	maxLoaded int
	budget    int64
	hubList   func() ([]hub.Manifest, error) // nil: the hub cache is not served
	log       *slog.Logger

	sources []Source // operator's, in order; names unique
	mu      sync.Mutex
	slots   map[string]*slot       // by path
	failed  map[string]loadFailure // by path: loads that failed, until the files change
	closed  bool
}

var errModelsBusy = &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "models_busy", RetryAfter: 5,
	Message: "every loaded model is busy and no more may be loaded (--max-loaded-models, --memory-budget); retry later"}

// resolve maps a request's model name to the path to load and the name to
// serve it as. Only operator sources and exact hub-cache references
// resolve: never an arbitrary path.
func (r *registry) resolve(name string) (canonical, path string, err error) {
	if name == "" {
		return "", "", badRequest("model", "model is required (GET /v1/models lists the models this server serves)")
	}
	for _, s := range r.sources {
		if s.Name == name {
			return r.canonical(s.Path, name), s.Path, nil
		}
	}
	if r.hubList != nil && hub.IsRef(name) {
		list, err := r.hubList()
		if err != nil {
			return "", "", fmt.Errorf("listing the hub cache: %w", err)
		}
		for _, m := range list {
			if m.Ref == name {
				return name, m.Path, nil
			}
		}
	}
	return "", "", notFound(name)
}

// canonical is the first source name of path: a model known by several
// names (an alias and its path) is loaded once and labelled by one.
func (r *registry) canonical(path, fallback string) string {
	for _, s := range r.sources {
		if s.Path == path {
			return s.Name
		}
	}
	return fallback
}

// acquire returns the named model, loading it if need be, held until
// release. It waits for a load in progress or ctx.
func (r *registry) acquire(ctx context.Context, name string) (*slot, error) {
	canon, path, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errDraining
	}
	s := r.slots[path]
	if s == nil {
		if err := r.failedLocked(path); err != nil {
			r.mu.Unlock()
			return nil, err
		}
		victims, ok := r.makeRoomLocked()
		if !ok {
			r.mu.Unlock()
			return nil, errModelsBusy
		}
		s = &slot{name: canon, path: path, ready: make(chan struct{})}
		r.slots[path] = s
		go r.loadSlot(s)
		r.unloadAsync(victims)
	}
	s.refs++
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	r.mu.Unlock()

	select {
	case <-s.ready:
	case <-ctx.Done():
		r.release(s)
		return nil, ctx.Err()
	}
	if s.err != nil {
		r.release(s)
		return nil, s.err
	}
	return s, nil
}

// loadSlot runs the loader and publishes the result. A failed slot is
// dropped and its failure remembered (loadFailure): the next request gets
// the same error without loading again, unless the files changed.
func (r *registry) loadSlot(s *slot) {
	start := time.Now()
	m, err := r.load(context.Background(), s.name, s.path)
	if err == nil && m.Template == nil {
		m.Template, err = chat.Compile("")
	}
	r.mu.Lock()
	if err != nil {
		s.err = &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "model_load_failed",
			Message: fmt.Sprintf("loading model %q: %v", s.name, err)}
		if r.slots[s.path] == s {
			delete(r.slots, s.path)
		}
		if r.failed == nil {
			r.failed = map[string]loadFailure{}
		}
		r.failed[s.path] = loadFailure{err: s.err, stamp: diskStamp(s.path)}
		r.log.Error("model load failed", "model", s.name, "path", s.path, "err", err)
	} else {
		s.m, s.created = m, time.Now()
		r.log.Info("model loaded", "model", s.name, "path", s.path, "seconds", time.Since(start).Seconds(),
			"max_model_len", m.MaxModelLen, "kv_blocks", m.NumBlocks, "block_size", m.BlockSize)
	}
	closed := r.closed
	r.mu.Unlock()
	close(s.ready)
	if closed && err == nil { // Close ran while it loaded
		r.unload(s)
	}
	if err == nil {
		r.enforceBudget()
	}
}

// release gives a model back; one idle for keepAlive is unloaded.
func (r *registry) release(s *slot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.refs--
	if s.refs > 0 {
		return
	}
	s.lastUsed = time.Now()
	if r.keepAlive < 0 || r.closed {
		return
	}
	s.timer = time.AfterFunc(r.keepAlive, func() {
		r.mu.Lock()
		idle := s.refs == 0 && r.slots[s.path] == s && s.m != nil
		if idle {
			delete(r.slots, s.path)
		}
		r.mu.Unlock()
		if idle {
			r.log.Info("model unloaded after keep-alive", "model", s.name, "keep_alive", r.keepAlive.String())
			r.unload(s)
		}
	})
}

// makeRoomLocked picks idle loaded models to unload so that one more may
// load within maxLoaded; false when too many are busy or loading.
func (r *registry) makeRoomLocked() (victims []*slot, ok bool) {
	for len(r.slots)-len(victims) >= r.maxLoaded {
		v := r.idlestLocked(victims)
		if v == nil {
			return nil, false
		}
		victims = append(victims, v)
	}
	for _, v := range victims {
		delete(r.slots, v.path)
	}
	return victims, true
}

// idlestLocked is the least recently used loaded model no request holds,
// not among skip.
func (r *registry) idlestLocked(skip []*slot) *slot {
	var best *slot
	for _, s := range r.slots {
		if s.refs > 0 || s.m == nil || slices.Contains(skip, s) {
			continue
		}
		if best == nil || s.lastUsed.Before(best.lastUsed) {
			best = s
		}
	}
	return best
}

// enforceBudget unloads idle models, least recently used first, while the
// loaded models' bytes exceed the memory budget.
func (r *registry) enforceBudget() {
	if r.budget <= 0 {
		return
	}
	r.mu.Lock()
	var victims []*slot
	for {
		var total int64
		for _, s := range r.slots {
			if s.m != nil && !slices.Contains(victims, s) {
				total += s.m.Bytes
			}
		}
		if total <= r.budget {
			break
		}
		v := r.idlestLocked(victims)
		if v == nil {
			r.log.Warn("loaded models exceed the memory budget and all are busy", "bytes", total, "budget", r.budget)
			break
		}
		victims = append(victims, v)
	}
	for _, v := range victims {
		delete(r.slots, v.path)
	}
	r.mu.Unlock()
	r.unloadAsync(victims)
}

func (r *registry) unloadAsync(victims []*slot) {
	for _, v := range victims {
		r.log.Info("model unloaded to make room", "model", v.name)
		go r.unload(v)
	}
}

// unload closes a model no request holds (it is out of the map).
func (r *registry) unload(s *slot) {
	if s.timer != nil {
		s.timer.Stop()
	}
	s.m.Engine.Close()
	if s.m.Close != nil {
		s.m.Close()
	}
}

// loaded returns the loaded models (for metrics and /v1/models), by name.
func (r *registry) loaded() []*slot {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*slot
	for _, s := range r.slots {
		if s.m != nil {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *slot) int { return strings.Compare(a.name, b.name) })
	return out
}

// close unloads every model; requests still holding one are the caller's
// to have ended (Server.Shutdown cancels them first).
func (r *registry) close() {
	r.mu.Lock()
	r.closed = true
	var all []*slot
	for p, s := range r.slots {
		if s.m != nil {
			all = append(all, s)
		}
		delete(r.slots, p)
	}
	r.mu.Unlock()
	for _, s := range all {
		r.unload(s)
	}
}

// errNoModels is what /ready says before the preloads finish.
var errNoModels = errors.New("no model loaded yet")
