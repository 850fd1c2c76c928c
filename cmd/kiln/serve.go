package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kiln/assemble"
	"kiln/chat"
	"kiln/engine"
	"kiln/hub"
	"kiln/internal/memstat"
	"kiln/sample"
	"kiln/server"
)

func init() {
	register("serve", "serve models over an OpenAI-compatible HTTP API", runServe)
}

// serveSignals is where runServe learns to stop; tests replace it.
var serveSignals = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// serveDrain is srv.Shutdown; tests replace it with a drain that lasts.
var serveDrain = func(srv *server.Server, ctx context.Context) error { return srv.Shutdown(ctx) }

// serveSecondSignal delivers the signals that come during the drain: a
// second Ctrl-C (or SIGTERM) ends kiln at once, exit status 1, rather
// than waiting out --shutdown-timeout. Tests replace it.
var serveSecondSignal = func() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// serveListening is told the address once the server listens (tests).
var serveListening = func(addr string) {}

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stdout)
	host := fs.String("host", "127.0.0.1", "address to listen on (0.0.0.0: every interface)")
	port := fs.Int("port", 8080, "TCP port (0: any free one)")
	var models stringList
	fs.Var(&models, "model", "a model requests may use, preloaded: PATH (.gguf, a Hugging Face folder or an hf: reference) or NAME=PATH (repeatable)")
	maxLoaded := fs.Int("max-loaded-models", 1, "models loaded at once; the least recently used idle one is unloaded to make room")
	memBudget := fs.String("memory-budget", "", "bytes loaded models may hold (weights and KV pools), e.g. 16GiB (default: no limit beyond --max-loaded-models)")
	keepAlive := fs.Duration("keep-alive", 5*time.Minute, "unload a model idle this long (negative: never)")
	maxQueue := fs.Int("max-queue", 256, "requests waiting for their first token; beyond it 429 with Retry-After (-1: no limit)")
	maxBody := fs.String("max-body-bytes", "8MiB", "request body limit (413 beyond)")
	maxGrammar := fs.String("max-grammar-bytes", "256KiB", "most bytes of one request's JSON schema, grammar, regex or choices (400 beyond)")
	grammarMem := fs.String("grammar-memory", "64MiB", "memory budget of compiling one request's structured-output grammar (400 beyond)")
	jsonWS := fs.Int("json-whitespace", 1, "bytes of whitespace a constrained JSON reply may put at each place JSON allows it (0: compact JSON)")
	openObjects := fs.Bool("allow-undeclared-properties", false, "read JSON schemas literally: an object schema listing properties but not additionalProperties allows others too (default: it allows none, as xgrammar's strict mode and llama.cpp do)")
	grammarCache := fs.String("grammar-cache-memory", "256MiB", "bytes of compiled structured-output grammars kept for reuse (least recently used out first)")
	apiKey := fs.String("api-key", "", "require 'Authorization: Bearer KEY' or 'x-api-key: KEY' (default $KILN_API_KEY; /health, /ready and /metrics stay open)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 30*time.Second, "on SIGTERM, how long in-flight requests may finish before they are cut")
	writeTimeout := fs.Duration("write-timeout", 60*time.Second, "each response write; a client that stops reading this long is cut off")
	threads := fs.Int("threads", 0, "worker threads per model (0: one per core)")
	maxSeqs := fs.Int("max-num-seqs", 64, "requests a model runs at once (the rest wait)")
	maxBatched := fs.Int("max-num-batched-tokens", 512, "tokens per engine step: decode tokens first, then prompt chunks")
	maxModelLen := fs.Int("max-model-len", 0, "context per request in tokens, at most the model's (0: the model's)")
	noPrefixCache := fs.Bool("no-prefix-cache", false, "turn the prefix cache off")
	pooling := fs.String("pooling", "", "/v1/embeddings pooling: last, mean or cls (default: the GGUF's <arch>.pooling_type, else last, as vLLM pools decoder models)")
	logFormat := fs.String("log-format", "text", "log lines as text or json (log/slog, on stderr)")
	maxLogprobs := fs.Int("max-logprobs", 20, "most top logprobs per token a request may ask (top_logprobs, logprobs); 0: the sampled token's only")
	allowedOrigins := fs.String("allowed-origins", "", `CORS: origins browsers may call from, a JSON list or comma list ("*": any; default none: no CORS headers)`)
	allowedMethods := fs.String("allowed-methods", "*", "CORS: methods a preflight may ask (JSON or comma list; *: any)")
	allowedHeaders := fs.String("allowed-headers", "*", "CORS: request headers a preflight may ask (JSON or comma list; *: any)")
	allowCredentials := fs.Bool("allow-credentials", false, "CORS: let browsers send cookies and auth (Access-Control-Allow-Credentials)")
	chatTemplate := addChatTemplateFlag(fs)
	kvTypeOf := kvTypeFlag(fs)
	kvf := addKVPoolFlags(fs)
	kve := addKVEventFlags(fs)
	lt := loadTypeFlags(fs)
	sf := addSpecFlags(fs)
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: kiln serve [--model [NAME=]PATH ...] [--host 127.0.0.1] [--port 8080] [flags]
  Serves OpenAI's API (/v1/completions, /v1/chat/completions, /v1/embeddings, /v1/models), /tokenize,
  /detokenize, /health, /ready and Prometheus /metrics with vLLM's metric names.
  A request's "model" is a --model NAME or PATH, or a 'kiln list' reference (hf:...)
  already downloaded; nothing else is opened. --kv-cache-memory is per model.
`)
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErrorf("serve takes no arguments (models go in --model), got %q", pos)
	}
	kvType, err := kvTypeOf()
	if err != nil {
		return err
	}
	if err := kvf.check(); err != nil {
		return err
	}
	if err := checkThreads(*threads); err != nil {
		return err
	}
	scheme, err := lt.scheme()
	if err != nil {
		return err
	}
	if err := sf.check(); err != nil {
		return err
	}
	switch {
	case *port < 0 || *port > 65535:
		return usageErrorf("--port %d: want 0 up to 65535", *port)
	case *maxLoaded < 1:
		return usageErrorf("--max-loaded-models %d: want at least 1", *maxLoaded)
	case *maxSeqs < 1 || *maxBatched < 1 || *maxModelLen < 0:
		return usageErrorf("--max-num-seqs and --max-num-batched-tokens must be positive, --max-model-len not negative")
	case *maxQueue < -1 || *maxQueue == 0:
		return usageErrorf("--max-queue %d: want a positive count, or -1 for no limit", *maxQueue)
	case *logFormat != "text" && *logFormat != "json":
		return usageErrorf("--log-format %q: want text or json", *logFormat)
	case *maxLogprobs < 0 || *maxLogprobs > sample.MaxTopLogprobs:
		return usageErrorf("--max-logprobs %d: want 0 up to %d", *maxLogprobs, sample.MaxTopLogprobs)
	case *pooling != "" && *pooling != server.PoolLast && *pooling != server.PoolMean && *pooling != server.PoolCLS:
		return usageErrorf("--pooling %q: want last, mean or cls", *pooling)
	}
	cors := map[string][]string{}
	for name, v := range map[string]string{"allowed-origins": *allowedOrigins, "allowed-methods": *allowedMethods, "allowed-headers": *allowedHeaders} {
		if cors[name], err = parseList(v); err != nil {
			return usageErrorf("--%s %q: %v", name, v, err)
		}
	}
	templateSrc, err := chatTemplateSource(*chatTemplate)
	if err != nil {
		return err
	}
	var budget int64
	if *memBudget != "" {
		if budget, err = memstat.ParseBytes(*memBudget); err != nil || budget <= 0 {
			return usageErrorf("--memory-budget %q: want a size such as 16GiB", *memBudget)
		}
	}
	bodyLimit, err := memstat.ParseBytes(*maxBody)
	if err != nil || bodyLimit <= 0 {
		return usageErrorf("--max-body-bytes %q: want a size such as 8MiB", *maxBody)
	}
	var grammarSizes [3]int64
	for i, f := range []struct{ name, val string }{{"max-grammar-bytes", *maxGrammar}, {"grammar-memory", *grammarMem}, {"grammar-cache-memory", *grammarCache}} {
		if grammarSizes[i], err = memstat.ParseBytes(f.val); err != nil || grammarSizes[i] <= 0 || grammarSizes[i] > 1<<40 {
			return usageErrorf("--%s %q: want a size such as 64MiB", f.name, f.val)
		}
	}
	if *jsonWS < 0 || *jsonWS > 64 {
		return usageErrorf("--json-whitespace %d: want 0 (compact JSON) up to 64 bytes", *jsonWS)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	key := *apiKey
	if set["api-key"] && key == "" { // --api-key "$UNSET_VAR" must not turn auth off
		return usageErrorf("--api-key is empty: give a key, or leave the flag out to serve without one")
	}
	if key == "" {
		key = os.Getenv("KILN_API_KEY")
	}
	sources, err := serveSources(models, stderr)
	if err != nil {
		return err
	}

	var logger *slog.Logger
	if *logFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(stderr, nil))
	} else {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	load := func(ctx context.Context, name, path string) (*server.Model, error) {
		// --type quantizes folders on load (the model's, the draft's); GGUF files are served as they are
		a, err := loadModel(assemble.Options{Model: path, Scheme: scheme, Draft: sf.draftPath(), Threads: *threads}, stderr)
		if err != nil {
			return nil, err
		}
		c := &a.Model.Config
		ctxLen := c.Context
		if *maxModelLen > c.Context { // vLLM refuses this too: positions past the trained context are garbage
			a.Close()
			return nil, fmt.Errorf("--max-model-len %d is more than the model's context of %d tokens: want at most %d (or 0 for the model's)", *maxModelLen, c.Context, c.Context)
		}
		if *maxModelLen > 0 {
			ctxLen = *maxModelLen
		}
		src := a.Tokenizer.Vocab().ChatTemplate
		if templateSrc != "" {
			src = templateSrc
		}
		tmpl, err := chat.Compile(src)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("the model's chat template: %w", err)
		}
		if tmpl.Fallback {
			logger.Warn(noTemplateNote("chat requests render ChatML"), "model", name)
		}
		events, cleared, err := kve.stream(name, *kvf.blockSize)
		if err != nil {
			a.Close()
			return nil, err
		}
		e, err := startEngine(a, kvf.kv(ctxLen, *maxSeqs), engine.Config{KVType: kvType, NoPrefixCache: *noPrefixCache, Spec: sf.resolved,
			MaxBatchedTokens: *maxBatched, MaxSeqs: *maxSeqs, MaxModelLen: ctxLen, Tokenizer: a.Tokenizer, KVEvents: events})
		if err != nil {
			a.Close()
			return nil, err
		}
		var draftBytes int64
		if a.Draft != nil {
			draftBytes = modelBytes(*sf.draft)
		}
		pool := *pooling
		if t, ok := a.PoolingType(); ok && pool == "" {
			pool = server.PoolingFromGGUF(t)
		}
		return &server.Model{Engine: e, Tokenizer: a.Tokenizer, Template: tmpl, MaxModelLen: ctxLen, MaxSeqs: *maxSeqs, Pooling: pool,
			BlockSize: a.BlockSize, NumBlocks: a.NumBlocks, PrefixCache: !*noPrefixCache, CacheDtype: kvType.String(), SpecTokens: sf.resolved.Tokens,
			Bytes: modelBytes(path) + draftBytes + a.KVBytes(), Close: func() { cleared(); a.Close() }}, nil
	}
	// --max-logprobs 0 (the sampled token's logprob only) is Config's -1: its 0 is the default.
	srv, err := server.New(server.Config{Models: sources, Load: load, HubList: hubList, APIKey: key, MaxLoadedModels: *maxLoaded,
		MemoryBudget: budget, KeepAlive: *keepAlive, MaxQueue: *maxQueue, MaxBodyBytes: bodyLimit, WriteTimeout: *writeTimeout, Logger: logger,
		MaxLogprobs: cmp.Or(*maxLogprobs, -1), AllowedOrigins: cors["allowed-origins"], AllowedMethods: cors["allowed-methods"],
		AllowedHeaders: cors["allowed-headers"], AllowCredentials: *allowCredentials,
		MaxGrammarBytes: int(grammarSizes[0]), GrammarMemory: grammarSizes[1], GrammarCacheMemory: grammarSizes[2],
		AllowUndeclaredProperties: *openObjects, JSONWhitespace: cmp.Or(*jsonWS, -1)})
	if err != nil {
		return err
	}
	ctx, stop := serveSignals()
	defer stop()
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	if err := kve.open(ln.Addr().String()); err != nil { // before any request can load a model
		ln.Close()
		return err
	}
	defer kve.close()
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.Name
	}
	// Every --model loads before the first request is accepted, as
	// llama-server and vLLM do: a broken one (a truncated file, a bad
	// tokenizer, NaN weights, a KV budget too small) stops kiln here with
	// its cause, instead of a server that is healthy and fails every
	// request. Connections made meanwhile wait in the listen backlog.
	if len(sources) > 0 {
		logger.Info("loading models", "models", strings.Join(names, ","))
	}
	if err := srv.Preload(ctx); err != nil {
		ln.Close()
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while loading the models")
		}
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	addr := ln.Addr().String()
	logger.Info("kiln serve listening", "url", "http://"+addr, "models", strings.Join(names, ","), "auth", key != "")
	serveListening(addr)

	select {
	case err := <-served: // the listener failed
		return err
	case <-ctx.Done():
	}
	again, stopAgain := serveSecondSignal() // listening before the drain begins
	defer stopAgain()
	logger.Info("shutting down: draining in-flight requests (a second Ctrl-C or SIGTERM exits at once)", "timeout", shutdownTimeout.String())
	dctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
	defer cancel()
	drained := make(chan error, 1)
	drain := serveDrain
	go func() { drained <- drain(srv, dctx) }()
	select {
	case err := <-drained:
		if err != nil {
			logger.Warn("requests were cut at the shutdown timeout", "err", err)
		}
	case <-again:
		return errors.New("second signal: exiting without finishing the drain (in-flight requests are dropped)")
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// serveSources turns --model values into named sources: NAME=PATH, or a
// PATH served under its own text and its base name (without .gguf).
// hf: references are resolved (downloaded if need be) at start.
func serveSources(values []string, stderr io.Writer) ([]server.Source, error) {
	var out []server.Source
	taken := map[string]bool{}
	add := func(name, path string) {
		if !taken[name] {
			taken[name] = true
			out = append(out, server.Source{Name: name, Path: path})
		}
	}
	for _, v := range values {
		name, path, aliased := strings.Cut(v, "=")
		if !aliased || hub.IsRef(v) {
			name, path = v, v
		}
		if name == "" || path == "" {
			return nil, usageErrorf("--model %q: want PATH or NAME=PATH", v)
		}
		if aliased && taken[name] {
			return nil, usageErrorf("--model: two models are named %q", name)
		}
		resolved, err := resolveModel(path, stderr)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(resolved); err != nil {
			return nil, fmt.Errorf("--model %s: %w", v, err)
		}
		if !aliased { // the short name first: it is the one listed and labelled
			add(strings.TrimSuffix(filepath.Base(filepath.Clean(resolved)), ".gguf"), resolved)
		}
		add(name, resolved)
	}
	return out, nil
}

// parseList reads a list flag as vLLM takes it: a JSON list of strings
// ('["http://a", "http://b"]') or a comma list ("http://a,http://b"); ""
// is none.
func parseList(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") {
		var out []string
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return nil, fmt.Errorf("want a JSON list of strings or a comma list")
		}
		return out, nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// hubList lists the downloaded models ('kiln list').
func hubList() ([]hub.Manifest, error) {
	c, err := hub.New(hub.Options{})
	if err != nil {
		return nil, err
	}
	return c.List()
}

// modelBytes is the size of a model's weights on disk: the GGUF file, or
// a Hugging Face folder's *.safetensors.
func modelBytes(path string) int64 {
	files := []string{path}
	if assemble.IsHFDir(path) {
		files, _ = filepath.Glob(filepath.Join(path, "*.safetensors"))
	}
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			n += st.Size()
		}
	}
	return n
}
