package server_test

import (
	"net/http/httptest"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"kiln/engine"
	"kiln/server"
)

// requestMemoryBudget is the structured-output compile budget of the
// memory fuzz server: small, so that inputs reach it quickly.
const requestMemoryBudget = 8 << 20

// compileWait is the server's bound on a request's wait for its grammar.
const compileWait = 10 * time.Second

// requestAllocBound is the most bytes one request to the memory fuzz
// server may allocate (the whole process's allocations while it runs, the
// engine's for it included): its grammar's compilation, stopped at the
// budget (measured: 1.33x the budget in allocations: the budget counts
// twice the bytes held, and arrays grow by copying), plus the request's
// body and response, a few hundred bytes per body byte at most, plus a
// fixed 4 MiB (a model's first vocabulary-as-bytes, 1.2 MiB measured; the
// response of n=16 × 60 tokens × 20 logprobs, 4.1 MiB allocated in all).
func requestAllocBound(body int) uint64 {
	return 2*requestMemoryBudget + 128*uint64(body) + 4<<20
}

// allocated is the process's total heap allocation so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// FuzzRequestMemory: no request body makes the server allocate more than
// requestAllocBound, whatever it asks for (grammars that expand, huge
// counts, many completions with logprobs), and none gets a 500.
func FuzzRequestMemory(f *testing.F) {
	for _, s := range []string{
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_regex":"(a{100}){100}"}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_regex":"((a{100}){100}){100}"}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_regex":"[a-z\\u0100-\\uffff]{1000,2000}"}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_grammar":"root ::= (\"ab\" [c-z]{10,90}){100}"}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_json":{"type":"string","minLength":90000}}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_json":{"type":"array","items":{"type":"array","items":{"type":"string","maxLength":1000},"maxItems":1000},"maxItems":1000}}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_json":{"type":"integer","minimum":-99999999999999,"maximum":99999999999999}}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_json":{"type":"object","properties":{"a":{"$ref":"#/$defs/x"},"b":{"$ref":"#/$defs/x"}},"$defs":{"x":{"anyOf":[{"type":"string","pattern":"^[a-z]{50,99}$"},{"type":"number"}]}}}}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"guided_choice":["` + strings.Repeat("abcdefgh", 7000) + `"]}`,
		`{"model":"tiny","prompt":"a","max_tokens":60,"n":16,"logprobs":20,"temperature":1}`,
		`{"model":"tiny","prompt":["a","b","c","d"],"max_tokens":60,"n":4,"logprobs":20,"echo":true}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"structured_outputs":{"regex":"(x|y|z){1,3000}"}}`,
		`{"model":"tiny","prompt":"a","max_tokens":4,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"string","minLength":5000,"maxLength":9000}},"required":["a"]}}}}`,
	} {
		f.Add(s)
	}
	ts := start(f, server.Config{MaxBodyBytes: 1 << 16, GrammarMemory: requestMemoryBudget}, &loader{cfg: engine.Config{MaxModelLen: 64, NumBlocks: 64}})
	h := ts.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		before, began := allocated(), time.Now()
		req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		used, took := allocated()-before, time.Since(began)
		if took > compileWait+5*time.Second {
			t.Fatalf("%.200q took %v", body, took)
		}
		if rec.Code >= 500 {
			t.Fatalf("status %d for %.200q: %.300s", rec.Code, body, rec.Body.Bytes())
		}
		if bound := requestAllocBound(len(body)); used > bound {
			t.Fatalf("%.200q (%d bytes, status %d) allocated %.1f MiB, more than the bound of %.1f MiB",
				body, len(body), rec.Code, float64(used)/(1<<20), float64(bound)/(1<<20))
		}
		if testing.Verbose() {
			t.Logf("%d bytes -> %d, %.2f MiB allocated: %.300s", len(body), rec.Code, float64(used)/(1<<20), rec.Body.Bytes())
		}
	})
}
