package grammar

import (
	"slices"
	"testing"
	"time"
)

// benchSchema is a realistic structured-output schema, and benchDoc a reply
// a model would write for it (pretty-printed, with free text, which is the
// costly case: nearly every token is allowed inside a string).
const benchSchema = `{"type":"object","properties":{
 "title":{"type":"string"},
 "summary":{"type":"string"},
 "rating":{"type":"integer","minimum":1,"maximum":5},
 "tags":{"type":"array","items":{"type":"string"},"maxItems":5},
 "published":{"type":"string","format":"date"},
 "authors":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string","format":"email"}},"required":["name"],"additionalProperties":false}}},
 "required":["title","summary","rating","tags"],"additionalProperties":false}`

const benchDoc = `{
  "title": "A Field Guide to Structured Decoding",
  "summary": "The book explains how constrained generation keeps a language model's output inside a formal grammar: JSON schemas are compiled to context-free grammars, an Earley parser follows the text byte by byte, and a trie of the vocabulary yields the allowed tokens at each step. Chapters cover caching, rollback for speculative decoding, and why 50 µs per token matters at scale.",
  "rating": 4,
  "tags": ["llm", "grammars", "json-schema", "inference"],
  "published": "2024-02-29",
  "authors": [
    {"name": "Ada Example", "email": "ada@example.org"},
    {"name": "Grace O'Neil"}
  ]
}`

// maskTimes replays toks through a fresh TokenMatcher of x and returns the
// time of FillMask before each token.
func maskTimes(tb testing.TB, x *TokenIndex, toks []int32, mask []uint64) []time.Duration {
	tm, err := x.NewTokenMatcher()
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]time.Duration, 0, len(toks))
	for _, id := range toks {
		t0 := time.Now()
		tm.FillMask(mask)
		out = append(out, time.Since(t0))
		if !MaskHas(mask, id) {
			tb.Fatalf("token %d not in the mask after %d bytes", id, tm.Bytes())
		}
		if err := tm.AcceptToken(id); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkMask measures FillMask per token over benchDoc as the real
// tokenizer encodes it, on one goroutine: ns/op is one whole document;
// the metrics are the median and p99 per token with the index's cache warm
// (the steady state of a served schema), and the same for the first pass
// over a fresh index (cold cache: each new context-free key walks the trie).
func BenchmarkMask(b *testing.B) {
	for _, name := range []string{"tok512", "llama2", "llama3", "qwen2"} {
		b.Run(name, func(b *testing.B) {
			tok, vocab := realTokenizer(b, name)
			toks := tok.Encode(benchDoc, false)
			g, err := CompileJSONSchema([]byte(benchSchema), nil)
			if err != nil {
				b.Fatal(err)
			}
			p, err := Compile(g)
			if err != nil {
				b.Fatal(err)
			}
			mask := make([]uint64, MaskWords(vocab.Size()))
			x, err := NewTokenIndex(p, vocab)
			if err != nil {
				b.Fatal(err)
			}
			cold := maskTimes(b, x, toks, mask)
			var warm []time.Duration
			b.ResetTimer()
			for b.Loop() {
				warm = append(warm, maskTimes(b, x, toks, mask)...)
			}
			b.ReportMetric(float64(quantile(warm, 0.5).Nanoseconds())/1e3, "µs-p50")
			b.ReportMetric(float64(quantile(warm, 0.99).Nanoseconds())/1e3, "µs-p99")
			b.ReportMetric(float64(quantile(cold, 0.5).Nanoseconds())/1e3, "µs-cold-p50")
			b.ReportMetric(float64(quantile(cold, 0.99).Nanoseconds())/1e3, "µs-cold-p99")
			var total time.Duration
			for _, d := range cold {
				total += d
			}
			b.ReportMetric(float64(total.Nanoseconds())/1e6, "ms-cold-total")
			b.ReportMetric(float64(len(toks)), "tokens")
		})
	}
}

// BenchmarkAllows measures the fast path: checking the sampled token only.
func BenchmarkAllows(b *testing.B) {
	tok, vocab := realTokenizer(b, "llama3")
	toks := tok.Encode(benchDoc, false)
	g, err := CompileJSONSchema([]byte(benchSchema), nil)
	if err != nil {
		b.Fatal(err)
	}
	p, err := Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	x, err := NewTokenIndex(p, vocab)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		tm, _ := x.NewTokenMatcher()
		for _, id := range toks {
			if !tm.Allows(id) {
				b.Fatal("rejected")
			}
			if err := tm.AcceptToken(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(toks))/1e3, "µs/token")
}

// BenchmarkCompileSchema measures schema → grammar → program per schema.
func BenchmarkCompileSchema(b *testing.B) {
	schemas := append([]string{benchSchema}, handSchemas...)
	for b.Loop() {
		for _, s := range schemas {
			g, err := CompileJSONSchema([]byte(s), nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Compile(g); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(schemas))/1e3, "µs/schema")
}
