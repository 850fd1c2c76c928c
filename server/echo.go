package server

import (
	"strconv"
	"unicode/utf8"

	"kiln/sample"
	"kiln/tokenizer"
)

// Echo and prompt log-probabilities on /v1/completions: what
// lm-evaluation-harness's local-completions backend scores multiple choice
// with (echo: true, logprobs: N, max_tokens: 0 or 1), and vLLM's
// prompt_logprobs: N.
//
// The numbers come from the engine's raw prompt logit rows
// (engine.Request.PromptLogits, what `kiln probs` prints from): the
// log-probability of prompt token p is row(p-1)[token] - LogSumExp(row(p-1)),
// as sample.LogSumExp computes it for generated tokens. The first prompt
// token has no row before it: null.

// maxPromptLogitBytes bounds the raw logit rows one request's prompts may
// ask for (prompt tokens x vocabulary x 4 bytes, all prompts together,
// held until scored): 512 MiB is about 880 tokens of a 152k vocabulary,
// 4,000 of a 32k one. A bound per request, not per prompt, so that one
// request of 64 prompts cannot hold 64 times it.
const maxPromptLogitBytes = 512 << 20

// promptLogprob is one entry of vLLM's prompt_logprobs: {token id: this}.
type promptLogprob struct {
	Logprob      float32 `json:"logprob"`
	Rank         int     `json:"rank"` // 1-based, in the whole vocabulary
	DecodedToken string  `json:"decoded_token"`
}

// echoedPrompt is one prompt as echoed: its text, and per token its piece
// and character offset in that text.
type echoedPrompt struct {
	text    string
	pieces  []string
	offsets []int // characters of text before token i
	runes   int   // characters of text
}

// echoPrompt decodes a prompt for echo. A leading BOS token (which
// EncodePrompt adds to text prompts) contributes no text, so a text
// prompt echoes as sent; the rest is the tokenizer's streaming decode.
func echoPrompt(tok *tokenizer.Tokenizer, prompt []int32) echoedPrompt {
	e := echoedPrompt{pieces: make([]string, len(prompt)), offsets: make([]int, len(prompt))}
	d := tok.NewDecoder()
	var text []byte
	for i, id := range prompt {
		e.pieces[i] = tok.Piece(id)
		e.offsets[i] = utf8.RuneCount(text)
		if i == 0 && id == tok.BOS() {
			continue
		}
		text = append(text, d.Add(id)...)
	}
	text = append(text, d.Flush()...)
	e.text = string(text)
	e.runes = utf8.RuneCount(text)
	return e
}

// scoredPrompt is a prompt's log-probabilities in the two shapes asked.
type scoredPrompt struct {
	legacy *completionLogprobs        // echo with logprobs: the prompt's part of choice.logprobs
	vllm   []map[string]promptLogprob // prompt_logprobs; entry 0 is null
}

// scorePrompt turns the logit rows after each of prompt's positions
// ([len(prompt)][vocab], the last unused) into the prompt's
// log-probabilities. topLegacy < 0 skips the legacy shape, topVLLM < 0
// vLLM's.
func scorePrompt(tok *tokenizer.Tokenizer, prompt []int32, rows []float32, e echoedPrompt, topLegacy, topVLLM int) (scoredPrompt, error) {
	var s scoredPrompt
	n := len(prompt)
	if topLegacy >= 0 {
		s.legacy = &completionLogprobs{Tokens: e.pieces, TokenLogprobs: make([]*float32, n),
			TopLogprobs: make([]map[string]float32, n), TextOffset: e.offsets}
	}
	if topVLLM >= 0 {
		s.vllm = make([]map[string]promptLogprob, n)
	}
	vocab := tok.Size()
	for p := 1; p < n; p++ {
		row := rows[(p-1)*vocab : p*vocab]
		lse, err := sample.LogSumExp(row)
		if err != nil {
			return s, err
		}
		id := prompt[p]
		lp := row[id] - lse
		if s.legacy != nil {
			top, err := sample.TopLogprobs(row, topLegacy, lse)
			if err != nil {
				return s, err
			}
			m := make(map[string]float32, len(top)+1)
			for _, t := range top {
				m[tok.Piece(t.ID)] = t.Logprob
			}
			m[tok.Piece(id)] = lp
			s.legacy.TokenLogprobs[p] = &lp
			s.legacy.TopLogprobs[p] = m
		}
		if s.vllm != nil {
			top, err := sample.TopLogprobs(row, topVLLM, lse)
			if err != nil {
				return s, err
			}
			m := make(map[string]promptLogprob, len(top)+1)
			for i, t := range top {
				m[strconv.Itoa(int(t.ID))] = promptLogprob{Logprob: t.Logprob, Rank: i + 1, DecodedToken: tok.Decode([]int32{t.ID})}
			}
			m[strconv.Itoa(int(id))] = promptLogprob{Logprob: lp, Rank: sample.Rank(row, id), DecodedToken: tok.Decode([]int32{id})}
			s.vllm[p] = m
		}
	}
	return s, nil
}

// prepend puts a prompt's legacy log-probabilities before a choice's
// generated ones (whose text offsets already count the echoed prompt).
func (p *completionLogprobs) prepend(gen *completionLogprobs) *completionLogprobs {
	if gen == nil {
		return p
	}
	return &completionLogprobs{
		Tokens:        append(append([]string(nil), p.Tokens...), gen.Tokens...),
		TokenLogprobs: append(append([]*float32(nil), p.TokenLogprobs...), gen.TokenLogprobs...),
		TopLogprobs:   append(append([]map[string]float32(nil), p.TopLogprobs...), gen.TopLogprobs...),
		TextOffset:    append(append([]int(nil), p.TextOffset...), gen.TextOffset...),
	}
}
