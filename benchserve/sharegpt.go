package benchserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
)

// ShareGPT output lengths: without --sharegpt-output-len a request asks
// for the reply's length in bytes / 4 (a rough tokens-per-byte of English
// text), capped at MaxShareGPTOutput; conversations whose prompt or reply
// comes to fewer than 4 tokens are skipped, as vLLM skips them.
const (
	MaxShareGPTOutput = 1024
	minShareGPTTokens = 4
)

// shareGPTEntry is one conversation of a ShareGPT file.
type shareGPTEntry struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// ParseShareGPT reads a ShareGPT file (a JSON array of
// {"conversations":[{"from":"human","value":..},{"from":"gpt","value":..}]})
// and returns its usable conversations as requests with text prompts: the
// first human turn ("human" or "user") is the prompt; the output length is
// outLen when positive, else the next reply's ("gpt", "assistant",
// "chatgpt") bytes/4, capped at MaxShareGPTOutput. PromptLen is the
// prompt's bytes/4 (the server's usage replaces it in the results).
// Entries are decoded one at a time, so a large file is never held twice.
func ParseShareGPT(r io.Reader, outLen int) ([]Request, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("sharegpt: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errors.New("sharegpt: want a JSON array of conversations")
	}
	var reqs []Request
	for i := 0; dec.More(); i++ {
		var e shareGPTEntry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("sharegpt: entry %d: %v", i, err)
		}
		if req, ok := shareGPTRequest(&e, outLen); ok {
			reqs = append(reqs, req)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("sharegpt: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("sharegpt: data after the array")
	}
	return reqs, nil
}

func shareGPTRequest(e *shareGPTEntry, outLen int) (Request, bool) {
	turns := e.Conversations
	for i, t := range turns {
		if t.From != "human" && t.From != "user" {
			continue
		}
		req := Request{Text: t.Value, PromptLen: len(t.Value) / 4, OutputLen: outLen}
		if req.PromptLen < minShareGPTTokens {
			return Request{}, false
		}
		if outLen > 0 {
			return req, true
		}
		for _, r := range turns[i+1:] {
			if r.From == "gpt" || r.From == "assistant" || r.From == "chatgpt" {
				req.OutputLen = min(len(r.Value)/4, MaxShareGPTOutput)
				return req, req.OutputLen >= minShareGPTTokens
			}
		}
		return Request{}, false
	}
	return Request{}, false
}

// ShareGPTDataset reads the ShareGPT file at path and returns n of its
// usable conversations, picked in a seeded random order.
func ShareGPTDataset(path string, n, outLen int, seed uint64) ([]Request, error) {
	if n < 1 {
		return nil, fmt.Errorf("sharegpt dataset: --num-prompts %d: want positive", n)
	}
	if outLen < 0 {
		return nil, fmt.Errorf("sharegpt dataset: --sharegpt-output-len %d: want 0 (from the reply) or positive", outLen)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all, err := ParseShareGPT(f, outLen)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(all) < n {
		return nil, fmt.Errorf("%s: %d usable conversations, fewer than --num-prompts %d", path, len(all), n)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:n], nil
}
