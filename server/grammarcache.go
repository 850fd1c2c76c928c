package server

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"kiln/grammar"
)

// grammarCache holds compiled structured-output grammars (token indexes)
// by (model path, kind, text), bounded by bytes, and compiles misses off
// the engine loop:
//
//   - A request's grammar text is at most maxText bytes (a 400 before any
//     work), and its compilation runs against a memory budget
//     (grammar.Limits) that stops it before the memory is spent.
//   - At most maxCompiles compilations run at once (half the cores, at
//     least one), so the engine loop always keeps cores to decode on;
//     identical requests arriving together share one compilation.
//   - A grammar that fails to compile is remembered too (a retry is a
//     lookup, not another compilation).
//   - The entries' bytes (grammar.TokenIndex.Bytes, which grows as masks
//     are cached) are summed on every insert and hit, and least recently
//     used entries go until the sum is within maxBytes.
//
// Waiting (for a compile slot and the compilation) is bounded by timeout;
// past it the request gets a 400 and a compilation already started still
// finishes, bounded by its budget, and is cached.
type grammarCache struct {
	maxText     int
	limits      grammar.Limits
	maxBytes    int64
	timeout     time.Duration
	compileSlot chan struct{} // one token per concurrent compilation

	mu       sync.Mutex
	order    *list.List // of *grammarEntry, most recent first
	byKey    map[grammarKey]*list.Element
	inflight map[grammarKey]*compileCall
	bytes    int64 // the entries' bytes at the last sum
	compiles int   // compilations started (tests)
}

// grammarKey is the SHA-256 of (model path, kind, text): a key of fixed
// size, whatever the size of the schema.
type grammarKey [sha256.Size]byte

type grammarEntry struct {
	key   grammarKey
	idx   *grammar.TokenIndex // nil when err is set
	err   error               // the client's error (400): deterministic, so cached
	bytes int64               // at the last sum
}

func (e *grammarEntry) size() int64 {
	if e.idx != nil {
		return e.idx.Bytes() + 128
	}
	return int64(len(e.err.Error())) + 128
}

// compileCall is one compilation that several requests may wait for.
type compileCall struct {
	done chan struct{}
	idx  *grammar.TokenIndex
	err  error
}

func newGrammarCache(maxText int, limits grammar.Limits, maxBytes int64, maxCompiles int, timeout time.Duration) *grammarCache {
	return &grammarCache{
		maxText: maxText, limits: limits, maxBytes: maxBytes, timeout: timeout,
		compileSlot: make(chan struct{}, max(1, maxCompiles)),
		order:       list.New(), byKey: map[grammarKey]*list.Element{}, inflight: map[grammarKey]*compileCall{},
	}
}

// stats returns the bytes and entries held, summed now.
func (c *grammarCache) stats() (bytes int64, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resum()
	return c.bytes, c.order.Len()
}

// resum re-sums the entries' bytes (indexes grow as they cache masks) and
// evicts least recently used entries past maxBytes, always keeping the
// most recent one. Call with mu held.
func (c *grammarCache) resum() {
	var total int64
	for el := c.order.Front(); el != nil; el = el.Next() {
		e := el.Value.(*grammarEntry)
		e.bytes = e.size()
		total += e.bytes
	}
	for total > c.maxBytes && c.order.Len() > 1 {
		e := c.order.Remove(c.order.Back()).(*grammarEntry)
		delete(c.byKey, e.key)
		total -= e.bytes
	}
	c.bytes = total
}

// get returns the token index of spec on the model in sl, compiling it on
// a miss (see grammarCache).
func (c *grammarCache) get(sl *slot, spec *constraintSpec) (*grammar.TokenIndex, error) {
	if len(spec.text) > c.maxText {
		ae := badRequest(spec.param, "%s: %d bytes of %s is more than this server's limit of %d (--max-grammar-bytes)",
			spec.param, len(spec.text), kindName(spec.kind), c.maxText)
		ae.Code = "grammar_too_large"
		return nil, ae
	}
	h := sha256.New()
	h.Write([]byte(sl.path))
	h.Write([]byte{0})
	h.Write([]byte(spec.kind))
	h.Write([]byte{0})
	h.Write([]byte(spec.text))
	var key grammarKey
	h.Sum(key[:0])

	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		e := el.Value.(*grammarEntry)
		c.resum()
		c.mu.Unlock()
		return e.idx, e.err
	}
	call, ok := c.inflight[key]
	if !ok {
		call = &compileCall{done: make(chan struct{})}
		c.inflight[key] = call
		c.compiles++
		go c.compile(key, call, sl, spec)
	}
	c.mu.Unlock()

	select {
	case <-call.done:
		return call.idx, call.err
	case <-time.After(c.timeout):
		ae := badRequest(spec.param, "%s: compiling it took longer than %v; simplify it", spec.param, c.timeout)
		ae.Code = "grammar_compile_timeout"
		return nil, ae
	}
}

// compile runs one compilation in a compile slot, then caches its result
// unless it failed for a reason other than the grammar itself.
func (c *grammarCache) compile(key grammarKey, call *compileCall, sl *slot, spec *constraintSpec) {
	cacheable := false
	select {
	case c.compileSlot <- struct{}{}:
		call.idx, call.err = compileIndex(sl, spec, c.limits)
		<-c.compileSlot
		var ae *apiError
		cacheable = call.err == nil || (errors.As(call.err, &ae) && ae.Status == 400)
	case <-time.After(c.timeout):
		ae := badRequest(spec.param, "%s: the server is busy compiling other grammars; retry later", spec.param)
		ae.Code = "grammar_compile_timeout"
		call.err = ae
	}
	c.mu.Lock()
	delete(c.inflight, key)
	if cacheable {
		if _, dup := c.byKey[key]; !dup {
			c.byKey[key] = c.order.PushFront(&grammarEntry{key: key, idx: call.idx, err: call.err})
		}
		c.resum()
	}
	c.mu.Unlock()
	close(call.done)
}

// compileIndex compiles spec for the model in sl within limits and warms
// the index with the grammar's first mask, the costliest one (a walk of the
// whole vocabulary from the start), so that the engine loop, which computes
// every later mask, does not pay it.
func compileIndex(sl *slot, spec *constraintSpec, limits grammar.Limits) (*grammar.TokenIndex, error) {
	vocab, err := sl.vocabulary()
	if err != nil {
		return nil, internal(fmt.Errorf("the model's vocabulary as bytes: %w", err))
	}
	if sl.m != nil {
		// A reply is at most the context's tokens, each at most the longest
		// token's bytes: a schema's maxLength past that constrains nothing.
		spec.maxOutput = sl.m.MaxModelLen * max(1, vocab.MaxTokenBytes())
	}
	g, err := spec.compile()
	if err != nil {
		return nil, err
	}
	prog, err := grammar.CompileWithin(g, limits)
	if err != nil {
		ae := spec.refused(err)
		if errors.Is(err, grammar.ErrTooLarge) {
			ae.Code = "grammar_too_large"
		}
		return nil, ae
	}
	idx, err := grammar.NewTokenIndex(prog, vocab)
	if err != nil {
		return nil, spec.refused(err)
	}
	tm, err := idx.NewTokenMatcher()
	if err != nil {
		return nil, spec.refused(err)
	}
	tm.FillMask(make([]uint64, grammar.MaskWords(vocab.Size())))
	return idx, nil
}

// kindName names a constraint kind for messages.
func kindName(kind string) string {
	switch kind {
	case "json_schema":
		return "JSON schema"
	case "json_object":
		return "JSON object"
	case "choice":
		return "choices"
	case "grammar":
		return "grammar"
	case "regex":
		return "regular expression"
	}
	return kind
}
