package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"kiln/grammar"
	"kiln/hub"
	"kiln/sample"
)

// compileTimeout bounds a request's wait for its structured-output grammar
// (a compile slot, then the compilation); the memory budget bounds the work,
// this bounds the wait a pathological schema or a flood of them can cause.
var compileTimeout = 10 * time.Second

// Config configures a Server. Zero values are the documented defaults.
type Config struct {
	Models          []Source                       // operator-allowed models (--model), preloaded by Preload
	Load            Loader                         // required
	HubList         func() ([]hub.Manifest, error) // the hub cache's models (kiln list); nil: not served
	APIKey          string                         // Bearer key every route but /health, /ready, /metrics needs; "": none
	MaxLoadedModels int                            // 0 means 1
	MemoryBudget    int64                          // bytes of loaded models (Model.Bytes); 0: no limit
	KeepAlive       time.Duration                  // unload a model idle this long; 0 means 5m, negative never
	MaxQueue        int                            // requests waiting for their first token; 0 means 256, negative no limit
	MaxBodyBytes    int64                          // request body limit; 0 means 8 MiB
	WriteTimeout    time.Duration                  // each write of a response; 0 means 60s
	// Structured output: the most bytes of one request's schema, grammar,
	// regex or choices (0 means 256 KiB), the memory budget of compiling
	// one (0 means grammar.DefaultLimits, 64 MiB), and the bytes of the
	// cache of compiled grammars (0 means 256 MiB).
	MaxGrammarBytes    int
	GrammarMemory      int64
	GrammarCacheMemory int64
	// AllowUndeclaredProperties reads object schemas literally: one that
	// lists properties but not additionalProperties allows any other
	// property too. false (the default): it allows none (strict, as
	// xgrammar and llama.cpp do).
	AllowUndeclaredProperties bool
	// JSONWhitespace is the whitespace a constrained JSON reply may put at
	// each place JSON allows it, in bytes: 0 means 1, negative none
	// (compact JSON).
	JSONWhitespace   int
	MaxLogprobs      int              // most top logprobs per token a request may ask (vLLM's --max-logprobs); 0 means 20, negative 0
	AllowedOrigins   []string         // CORS origins ("*": any); none: no CORS headers at all (cors.go)
	AllowedMethods   []string         // CORS methods; none or "*": any
	AllowedHeaders   []string         // CORS request headers; none or "*": any
	AllowCredentials bool             // CORS: Access-Control-Allow-Credentials: true
	Logger           *slog.Logger     // access and lifecycle logs; nil: discarded
	Now              func() time.Time // the clock of "created" fields; nil: time.Now
}

func (c *Config) fill() error {
	if c.Load == nil {
		return errors.New("server: Config.Load is required")
	}
	if c.MaxLoadedModels == 0 {
		c.MaxLoadedModels = 1
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = 5 * time.Minute
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = 256
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 8 << 20
	}
	if c.MaxGrammarBytes == 0 {
		c.MaxGrammarBytes = 256 << 10
	}
	if c.GrammarMemory == 0 {
		c.GrammarMemory = grammar.DefaultLimits.MaxBytes
	}
	if c.GrammarCacheMemory == 0 {
		c.GrammarCacheMemory = 256 << 20
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 60 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.MaxLogprobs == 0:
		c.MaxLogprobs = sample.MaxTopLogprobs
	case c.MaxLogprobs < 0:
		c.MaxLogprobs = -1 // the sampled token's logprob only; kept apart from 0, the default
	case c.MaxLogprobs > sample.MaxTopLogprobs:
		return fmt.Errorf("server: MaxLogprobs %d: kiln returns at most %d top logprobs", c.MaxLogprobs, sample.MaxTopLogprobs)
	}
	if c.MaxLoadedModels < 0 || c.MaxBodyBytes < 0 || c.WriteTimeout < 0 || c.MemoryBudget < 0 ||
		c.MaxGrammarBytes < 0 || c.GrammarMemory < 0 || c.GrammarCacheMemory < 0 {
		return fmt.Errorf("server: negative limit in the configuration")
	}
	seen := map[string]bool{}
	for _, s := range c.Models {
		if s.Name == "" || s.Path == "" {
			return fmt.Errorf("server: model source %+v needs a name and a path", s)
		}
		if seen[s.Name] {
			return fmt.Errorf("server: two models are named %q", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// Server is kiln's OpenAI-compatible API. Create it with New, serve its
// Handler (or call Serve), and stop it with Shutdown.
type Server struct {
	cfg     Config
	reg     *registry
	metrics *metrics
	handler http.Handler
	// compiled structured-output grammars by (model, kind, text)
	grammars *grammarCache

	queued   atomic.Int64 // prompts waiting for their first event
	draining atomic.Bool
	ready    atomic.Bool

	mu       sync.Mutex
	http     *http.Server
	shutDown bool            // Shutdown has begun: a later Serve returns at once
	base     context.Context // every request's parent: cancelled to cut what Shutdown's drain left
	cutBase  context.CancelCauseFunc
}

// New builds a server; nothing is loaded until Preload or a request.
func New(cfg Config) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, grammars: newGrammarCache(cfg.MaxGrammarBytes, grammar.Limits{MaxBytes: cfg.GrammarMemory},
		cfg.GrammarCacheMemory, runtime.GOMAXPROCS(0)/2, compileTimeout)}
	s.reg = &registry{load: cfg.Load, keepAlive: cfg.KeepAlive, maxLoaded: cfg.MaxLoadedModels, budget: cfg.MemoryBudget,
		hubList: cfg.HubList, log: cfg.Logger, sources: cfg.Models, slots: map[string]*slot{}}
	s.metrics = newMetrics(s.reg, s.grammars)
	s.base, s.cutBase = context.WithCancelCause(context.Background())
	s.handler = s.routes()
	if len(cfg.Models) == 0 {
		s.ready.Store(true) // nothing to preload: models load on first use
	}
	return s, nil
}

// Handler is the server's HTTP handler (tests serve it with httptest).
func (s *Server) Handler() http.Handler { return s.handler }

// Preload loads every Config.Models model (distinct paths once), then
// marks the server ready. Models stay subject to KeepAlive.
func (s *Server) Preload(ctx context.Context) error {
	for _, src := range s.cfg.Models {
		sl, err := s.reg.acquire(ctx, src.Name)
		if err != nil {
			return fmt.Errorf("--model %s (%s): %w", src.Name, src.Path, err)
		}
		s.reg.release(sl)
	}
	s.ready.Store(true)
	return nil
}

// Serve accepts connections on ln until Shutdown (then it returns
// http.ErrServerClosed).
func (s *Server) Serve(ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second, // the whole body; responses have their own per-write deadline
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	if s.shutDown {
		// Shutdown came first (it found no http.Server to stop): serving
		// now would never end.
		s.mu.Unlock()
		ln.Close()
		return http.ErrServerClosed
	}
	s.http = hs
	s.mu.Unlock()
	return hs.Serve(ln)
}

// Shutdown stops accepting connections and new requests (503), waits for
// in-flight requests until ctx ends, then cancels those left (their
// clients get what was generated so far), and unloads every model.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.mu.Lock()
	hs := s.http
	s.shutDown = true
	s.mu.Unlock()
	var err error
	if hs != nil {
		err = hs.Shutdown(ctx)
		if err != nil { // the drain ran out of time: cut the rest
			s.cutBase(errShutdownCut)
			cut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if hs.Shutdown(cut) != nil {
				hs.Close()
			}
			cancel()
		}
	}
	s.cutBase(errShutdownCut)
	s.reg.close()
	return err
}

// reserve takes k places in the waiting queue, or refuses with 429.
func (s *Server) reserve(k int) error {
	if s.cfg.MaxQueue < 0 {
		s.queued.Add(int64(k))
		return nil
	}
	for {
		q := s.queued.Load()
		if q+int64(k) > int64(s.cfg.MaxQueue) {
			s.metrics.rejected.Inc()
			return errQueueFull
		}
		if s.queued.CompareAndSwap(q, q+int64(k)) {
			return nil
		}
	}
}

func (s *Server) unreserve(k int) { s.queued.Add(-int64(k)) }

// routes wires the endpoints behind the access log and the API key.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/completions", s.handleCompletions)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/responses", s.handleResponses)
	mux.HandleFunc("/v1/responses/{id}", handleStoredResponse)
	mux.HandleFunc("POST /v1/completions/render", s.handleCompletionsRender)
	mux.HandleFunc("POST /v1/chat/completions/render", s.handleChatRender)
	mux.HandleFunc("POST /v1/messages", s.handleMessages) // Anthropic's Messages API (messages.go)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.handleCountTokens)
	mux.HandleFunc("POST /v1/embeddings", s.handleEmbeddings) // embeddings.go
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("POST /tokenize", s.handleTokenize)
	mux.HandleFunc("POST /detokenize", s.handleDetokenize)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /ready", s.handleReady)
	mux.Handle("GET /metrics", s.metrics.handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError := writeError
		if anthropicPath(r.URL.Path) {
			writeError = writeMessagesError
		}
		if allow := allowed(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Code: "method_not_allowed",
				Message: fmt.Sprintf("%s does not take %s: use %s", r.URL.Path, r.Method, strings.Join(allow, " or "))})
			return
		}
		writeError(w, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "not_found",
			Message: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
	})
	return s.logRequests(s.cors(s.authorize(mux)))
}

// allowed lists the methods mux serves r's path with. The catch-all "/"
// route (OpenAI's 404 envelope) would otherwise hide net/http's own 405.
func allowed(mux *http.ServeMux, r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
			out = append(out, m)
		}
	}
	return out
}

// open are the routes that need no API key: probes and scrapers.
func open(path string) bool { return path == "/health" || path == "/ready" || path == "/metrics" }

// authorize checks "Authorization: Bearer KEY", or Anthropic's
// "x-api-key: KEY", in constant time.
func (s *Server) authorize(next http.Handler) http.Handler {
	if s.cfg.APIKey == "" {
		return next
	}
	want := []byte(s.cfg.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !open(r.URL.Path) {
			scheme, got, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
			// The scheme is case-insensitive (RFC 7235 section 2.1): "bearer KEY" is as good.
			bearer := strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) == 1
			xKey := subtle.ConstantTimeCompare([]byte(strings.TrimSpace(r.Header.Get("X-Api-Key"))), want) == 1
			if !bearer && !xKey {
				if anthropicPath(r.URL.Path) {
					writeMessagesError(w, errUnauthorized)
				} else {
					writeError(w, errUnauthorized)
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() || s.draining.Load() {
		writeError(w, &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "not_ready", RetryAfter: 1,
			Message: "the server is not ready: " + map[bool]string{true: "shutting down", false: errNoModels.Error()}[s.draining.Load()]})
		return
	}
	w.WriteHeader(http.StatusOK)
}

// generationRequest is a completions or chat body.
type generationRequest interface {
	model() string
	unsupported() error // known fields kiln refuses rather than ignore
}

func (q *samplingRequest) model() string { return q.Model }

// refused are the shared fields kiln does not implement: answering without
// them would be answering something else than asked.
func (q *samplingRequest) refused() error {
	if q.PromptLogprobs != nil {
		return badRequest("prompt_logprobs", "prompt_logprobs is not supported")
	}
	return nil
}

// openRequest decodes and checks a generation body into q and holds its
// model (release it when done); on failure it has answered the error and
// returns nil.
func (s *Server) openRequest(w http.ResponseWriter, r *http.Request, q generationRequest) *slot {
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, q); err != nil {
		writeError(w, err)
		return nil
	}
	if err := q.unsupported(); err != nil {
		writeError(w, err)
		return nil
	}
	sl, err := s.acquire(r, q.model())
	if err != nil {
		writeError(w, err)
		return nil
	}
	return sl
}

// acquire resolves and holds a request's model; draining refuses.
func (s *Server) acquire(r *http.Request, name string) (*slot, error) {
	if s.draining.Load() {
		return nil, errDraining
	}
	return s.reg.acquire(r.Context(), name)
}
