package engine_test

import (
	"encoding/json"
	"testing"

	"kiln/engine"
	"kiln/grammar"
	"kiln/sample"
)

// TestConstraint: with a grammar the random-weight model can only say
// what the grammar allows, each of n completions under its own matcher,
// greedy and sampled, and ends with a stop once the grammar is complete.
func TestConstraint(t *testing.T) {
	m, tok := tiny(t)
	e := newEngine(t, m, engine.Config{NumBlocks: 64, Tokenizer: tok})
	vocab, err := grammar.VocabularyFromTokenizer(tok)
	if err != nil {
		t.Fatal(err)
	}
	index := func(g *grammar.Grammar) func() (sample.Constraint, error) {
		prog, err := grammar.Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := grammar.NewTokenIndex(prog, vocab)
		if err != nil {
			t.Fatal(err)
		}
		return func() (sample.Constraint, error) { return idx.NewTokenMatcher() }
	}
	choice, err := grammar.ParseGBNF(`root ::= "yes" | "no" | "maybe so"`)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := grammar.CompileJSONSchema([]byte(`{"type":"object","properties":{"a":{"enum":[1,2,"three"]}},"required":["a"],"additionalProperties":false}`),
		&grammar.SchemaOptions{MaxWhitespace: -1})
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(5)
	for _, tc := range []struct {
		name  string
		c     func() (sample.Constraint, error)
		valid func(string) bool
	}{
		{"choice", index(choice), func(s string) bool { return s == "yes" || s == "no" || s == "maybe so" }},
		{"schema", index(schema), func(s string) bool {
			var v map[string]any
			return json.Unmarshal([]byte(s), &v) == nil && len(v) == 1 && (v["a"] == 1.0 || v["a"] == 2.0 || v["a"] == "three")
		}},
	} {
		for _, p := range []sample.Params{
			{Temperature: 0, TopP: 1, RepetitionPenalty: 1, MaxTokens: 64},
			{Temperature: 1, TopP: 0.9, TopK: 20, RepetitionPenalty: 1, MaxTokens: 64, Seed: &seed},
			{Temperature: 1.5, TopP: 1, RepetitionPenalty: 1, MaxTokens: 64, Seed: &seed},
		} {
			// IgnoreEOS does not outlive the grammar: the end is the end.
			ch, err := e.Submit(t.Context(), engine.Request{Text: "answer:", Params: p, N: 3, Constraint: tc.c, IgnoreEOS: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range collectN(t, ch, 3) {
				if !tc.valid(r.text) || r.final.Reason != engine.Stop {
					t.Errorf("%s %+v: %q (%s), not what the grammar allows", tc.name, p, r.text, r.final.Reason)
				}
			}
		}
	}
}
