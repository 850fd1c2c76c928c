package main

import (
	"flag"
	"fmt"
	"io"

	"kiln/engine"
	"kiln/spec"
)

// specFlags are speculative decoding's flags (vLLM's names where it has
// them): --spec, --num-speculative-tokens, --spec-ngram-min,
// --spec-ngram-max, --spec-max-seqs, --draft (llama.cpp's --model-draft),
// --spec-adaptive.
type specFlags struct {
	method           *string
	draft            *string
	tokens           *int
	ngramMin, ngMax  *int
	maxSeqs          *int
	adaptive         *bool
	resolved         engine.Speculation // set by check
	checked, enabled bool
}

func addSpecFlags(fs *flag.FlagSet) *specFlags {
	return &specFlags{
		method:   fs.String("spec", "", "speculative decoding: ngram (prompt lookup: drafts the tokens that followed the last n-gram's latest earlier occurrence) or draft (a small model with the same vocabulary drafts greedily: --draft); empty: off"),
		draft:    fs.String("draft", "", "--spec draft: the draft model, given as MODEL is (GGUF path, hf: reference or Hugging Face folder); its KV takes a share of --kv-cache-memory"),
		tokens:   fs.Int("num-speculative-tokens", 4, fmt.Sprintf("--spec: drafted tokens per step (1 up to %d)", engine.MaxSpecTokens)),
		ngramMin: fs.Int("spec-ngram-min", spec.DefaultNGramMin, "--spec ngram: shortest n-gram looked up"),
		ngMax:    fs.Int("spec-ngram-max", spec.DefaultNGramMax, "--spec ngram: longest n-gram looked up"),
		maxSeqs:  fs.Int("spec-max-seqs", 4, "--spec: speculate only in steps that begin with at most this many running requests"),
		adaptive: fs.Bool("spec-adaptive", true, "--spec: acceptance- and cost-aware policy: each request drafts as many tokens (up to --num-speculative-tokens) as its acceptance so far makes worth their cost measured on this machine's forwards, and pauses drafting (probing now and then) when none is; =false drafts the full k every step"),
	}
}

// check refuses malformed values (usage errors) and resolves the engine's
// Speculation.
func (s *specFlags) check() error {
	switch *s.method {
	case "":
		if *s.draft != "" {
			return usageErrorf("--draft needs --spec draft")
		}
		return nil
	case "ngram":
		if *s.draft != "" {
			return usageErrorf("--draft needs --spec draft, not --spec ngram")
		}
	case "draft":
		if *s.draft == "" {
			return usageErrorf("--spec draft needs --draft MODEL")
		}
	default:
		return usageErrorf("--spec %q: want ngram or draft", *s.method)
	}
	if t := *s.tokens; t < 1 || t > engine.MaxSpecTokens {
		return usageErrorf("--num-speculative-tokens %d: want 1 up to %d", t, engine.MaxSpecTokens)
	}
	if *s.maxSeqs < 1 {
		return usageErrorf("--spec-max-seqs %d: want at least 1", *s.maxSeqs)
	}
	g, err := spec.NGram{Min: *s.ngramMin, Max: *s.ngMax}.Resolved()
	if err != nil || *s.ngramMin < 1 {
		return usageErrorf("--spec-ngram-min %d, --spec-ngram-max %d: want 1 <= min <= max", *s.ngramMin, *s.ngMax)
	}
	s.resolved = engine.Speculation{Method: *s.method, Tokens: *s.tokens, NGram: g, MaxSeqs: *s.maxSeqs, Adaptive: *s.adaptive}
	s.enabled = true
	return nil
}

// draftPath is --draft for loadModel: the draft model's path with --spec
// draft (after check), "" otherwise.
func (s *specFlags) draftPath() string {
	if !s.enabled || s.resolved.Method != "draft" {
		return ""
	}
	return *s.draft
}

// specReport is the acceptance of a run's drafts (engine.Counters).
type specReport struct {
	Method         string  `json:"spec_method,omitempty"`
	Tokens         int     `json:"num_speculative_tokens,omitempty"`
	Drafts         int64   `json:"spec_num_drafts,omitempty"`
	DraftTokens    int64   `json:"spec_num_draft_tokens,omitempty"`
	AcceptedTokens int64   `json:"spec_num_accepted_tokens,omitempty"`
	AcceptanceRate float64 `json:"spec_acceptance_rate,omitempty"` // accepted / drafted tokens
	MeanAccepted   float64 `json:"spec_mean_accepted_length,omitempty"`
}

func (s *specFlags) report(c engine.Counters) specReport {
	if !s.enabled {
		return specReport{}
	}
	r := specReport{Method: s.resolved.Method, Tokens: s.resolved.Tokens, Drafts: c.SpecDrafts, DraftTokens: c.SpecDraftTokens, AcceptedTokens: c.SpecAcceptedTokens}
	if c.SpecDraftTokens > 0 {
		r.AcceptanceRate = round2(float64(c.SpecAcceptedTokens) / float64(c.SpecDraftTokens))
		r.MeanAccepted = round2(1 + float64(c.SpecAcceptedTokens)/float64(c.SpecDrafts)) // tokens per verifying step of a sequence
	}
	return r
}

func (r specReport) print(w io.Writer) {
	if r.Method == "" {
		return
	}
	fmt.Fprintf(w, "spec      %s k=%d: %d drafts, %d of %d drafted tokens accepted (%.0f%%), %.2f tokens per verify\n",
		r.Method, r.Tokens, r.Drafts, r.AcceptedTokens, r.DraftTokens, 100*r.AcceptanceRate, r.MeanAccepted)
}
