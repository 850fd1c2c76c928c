package server

import (
	"errors"

	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"kiln/grammar"
)

// testSlot is a model slot whose vocabulary is a few JSON tokens and every
// lowercase letter (enough to walk an enum of letters).
func testSlot(t *testing.T, path string) *slot {
	t.Helper()
	toks := [][]byte{[]byte("{"), []byte("}"), []byte("\"a\""), []byte(":"), []byte("1"), []byte("\""), nil}
	for c := byte('a'); c <= 'z'; c++ {
		toks = append(toks, []byte{c}, []byte{c, c})
	}
	vocab, err := grammar.NewVocabulary(toks, []int32{6})
	if err != nil {
		t.Fatal(err)
	}
	sl := &slot{path: path}
	sl.vocabOnce.Do(func() { sl.vocab = vocab })
	return sl
}

// enumSpec is a guided_json enum of n distinct strings of length letters.
func enumSpec(n, length, seed int) *constraintSpec {
	vals := make([]string, n)
	x := uint32(seed*7919 + 1)
	for i := range vals {
		b := make([]byte, length)
		for j := range b {
			x = x*1664525 + 1013904223
			b[j] = 'a' + byte(x>>24)%26
		}
		vals[i] = `"` + string(b) + `"`
	}
	return &constraintSpec{kind: "json_schema", param: "guided_json", text: `{"enum":[` + strings.Join(vals, ",") + `]}`}
}

func wantAPIError(t *testing.T, err error, code, param string) {
	t.Helper()
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != code || ae.Param != param {
		t.Fatalf("err %v, want a 400 %s on %s", err, code, param)
	}
}

// A compilation that outlasts the timeout is a 400 naming the field, not a
// wait.
func TestGrammarCacheTimeout(t *testing.T) {
	c := newGrammarCache(1<<20, grammar.DefaultLimits, 64<<20, 1, time.Nanosecond)
	spec := &constraintSpec{kind: "json_schema", param: "response_format",
		text: `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","maxLength":50},{"type":"integer","minimum":-99999,"maximum":99999}]}}}`}
	_, err := c.get(testSlot(t, "m"), spec)
	wantAPIError(t, err, "grammar_compile_timeout", "response_format")
}

// Text over the limit is refused before any work.
func TestGrammarCacheTextLimit(t *testing.T) {
	c := newGrammarCache(1000, grammar.DefaultLimits, 64<<20, 1, time.Minute)
	_, err := c.get(testSlot(t, "m"), enumSpec(100, 20, 1)) // ~2.3 KB
	wantAPIError(t, err, "grammar_too_large", "guided_json")
	if !strings.Contains(err.Error(), "--max-grammar-bytes") || c.compiles != 0 {
		t.Fatalf("err %q (want the flag named), %d compiles (want 0)", err, c.compiles)
	}
}

// A grammar over the memory budget is refused, the refusal is cached (a
// retry compiles nothing), and identical requests at once share one
// compilation.
func TestGrammarCacheBudgetAndSharing(t *testing.T) {
	c := newGrammarCache(8<<20, grammar.Limits{MaxBytes: 1 << 20}, 64<<20, 1, time.Minute)
	sl := testSlot(t, "m")
	big := enumSpec(2000, 100, 1) // 200 KB of strings: ~60 MiB to compile
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.get(sl, big) })
	}
	wg.Wait()
	for _, err := range errs {
		wantAPIError(t, err, "grammar_too_large", "guided_json")
	}
	_, err := c.get(sl, big)
	wantAPIError(t, err, "grammar_too_large", "guided_json")
	if c.compiles != 1 {
		t.Fatalf("%d compilations for 9 requests of one grammar, want 1", c.compiles)
	}
	if _, err := c.get(sl, enumSpec(10, 10, 2)); err != nil {
		t.Fatalf("a small enum within the budget: %v", err)
	}
}

// The cache holds at most its bytes, evicting the least recently used.
func TestGrammarCacheBytes(t *testing.T) {
	sl := testSlot(t, "m")
	probe := newGrammarCache(8<<20, grammar.DefaultLimits, 1<<40, 1, time.Minute)
	idx, err := probe.get(sl, enumSpec(200, 50, 0))
	if err != nil {
		t.Fatal(err)
	}
	one := idx.Bytes() + 128
	max := 5*one + one/2 // room for five
	c := newGrammarCache(8<<20, grammar.DefaultLimits, max, 1, time.Minute)
	for i := range 12 {
		if _, err := c.get(sl, enumSpec(200, 50, i)); err != nil {
			t.Fatal(err)
		}
		if b, n := c.stats(); b > max || n > 5 {
			t.Fatalf("after %d grammars: %d bytes in %d entries, want at most %d bytes", i+1, b, n, max)
		}
	}
	// The most recent five stay; the first went.
	before := c.compiles
	if _, err := c.get(sl, enumSpec(200, 50, 11)); err != nil || c.compiles != before {
		t.Fatalf("the newest grammar recompiled (%v)", err)
	}
	if _, err := c.get(sl, enumSpec(200, 50, 0)); err != nil || c.compiles != before+1 {
		t.Fatalf("the oldest grammar was not evicted (%v)", err)
	}

}

// Objects are strict unless the server allows undeclared properties
// (Config.AllowUndeclaredProperties, --allow-undeclared-properties).
func TestSchemaObjectsStrictByDefault(t *testing.T) {
	for _, open := range []bool{false, true} {
		spec := &constraintSpec{kind: "json_schema", param: "guided_json", openObjects: open,
			text: `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`}
		g, err := spec.compile()
		if err != nil {
			t.Fatal(err)
		}
		p, err := grammar.Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		m, err := grammar.NewMatcher(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Advance([]byte(`{"a":1,"b":2}`)) == nil && m.CanEnd(); got != open {
			t.Errorf("open objects %v: an undeclared property accepted: %v", open, got)
		}
	}
}
