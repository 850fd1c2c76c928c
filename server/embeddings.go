package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"

	"kiln/engine"
	"kiln/sample"
)

// embeddingsRequest is POST /v1/embeddings' body (OpenAI's shape; vLLM's
// pooling runner, llama.cpp's --embedding).
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`           // a string, a list of strings, a list of token ids, or a list of such lists
	EncodingFormat string          `json:"encoding_format"` // "float" (default) or "base64": little-endian float32 bytes
	Dimensions     *int            `json:"dimensions"`      // only the model's own width is accepted
	User           string          `json:"user"`            // ignored
	Normalize      *bool           `json:"normalize"`       // L2-normalise (vLLM's extension); default true
}

type embeddingsResponse struct {
	Object string          `json:"object"` // "list"
	Data   []embeddingData `json:"data"`
	Model  string          `json:"model"`
	Usage  embeddingsUsage `json:"usage"`
}

type embeddingData struct {
	Object    string `json:"object"` // "embedding"
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32, or a base64 string
}

type embeddingsUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// handleEmbeddings serves POST /v1/embeddings: each input is run through
// the engine as a prompt-only request (one throwaway sampled token) that
// keeps the final-norm hidden rows pooling needs (engine.Request
// PromptHidden); those positions bypass the prefix cache as prompt
// logits do. Inputs run concurrently, batched by the engine.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	var q embeddingsRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &q); err != nil {
		writeError(w, err)
		return
	}
	switch q.EncodingFormat {
	case "", "float", "base64":
	default:
		writeError(w, badRequest("encoding_format", "encoding_format must be \"float\" or \"base64\", not %q", q.EncodingFormat))
		return
	}
	sl, err := s.acquire(r, q.Model)
	if err != nil {
		writeError(w, err)
		return
	}
	defer s.reg.release(sl)
	m := sl.m
	prompts, err := parsePrompt(bytes.TrimSpace(q.Input), m.Tokenizer)
	if err != nil {
		if ae := asAPIError(err); ae.Param == "prompt" {
			ae.Param = "input"
		}
		writeError(w, err)
		return
	}
	pooling := m.Pooling
	if pooling == "" {
		pooling = PoolLast
	}
	total := 0
	for i, p := range prompts {
		if len(p) >= m.MaxModelLen { // the engine samples one token after the prompt
			writeError(w, badRequest("input", "this model's maximum context length is %d tokens, but input %d has %d", m.MaxModelLen, i, len(p)))
			return
		}
		total += len(p)
	}
	if err := s.reserve(len(prompts)); err != nil {
		writeError(w, err)
		return
	}
	defer s.unreserve(len(prompts))
	params := sample.Defaults()
	params.Temperature, params.MaxTokens = 0, 1
	type result struct {
		rows []float32
		err  error
	}
	results := make([]chan result, len(prompts))
	ctx, cancel := context.WithCancel(r.Context()) // a refused input cancels the others
	defer cancel()
	for i, p := range prompts {
		ch, err := m.Engine.Submit(ctx, engine.Request{Prompt: p, Params: params, IgnoreEOS: true, NoSpec: true,
			PromptLogits: poolRows(pooling, len(p)), PromptHidden: true})
		if err != nil {
			cancel()
			for _, c := range results[:i] {
				<-c
			}
			var re *engine.RequestError
			switch {
			case errors.Is(err, engine.ErrClosed):
				writeError(w, errDraining)
			case errors.As(err, &re):
				writeError(w, badRequest("input", "input %d: %s", i, re.Reason))
			default:
				writeError(w, internal(err))
			}
			return
		}
		results[i] = make(chan result, 1)
		go func() {
			var res result
			for ev := range ch { // to the end: the channel closes after the final event
				if ev.PromptLogits != nil {
					res.rows = ev.PromptLogits
				}
				if ev.Done && ev.Reason == engine.Abort && res.err == nil {
					res.err = ev.Err
					if res.err == nil {
						res.err = ctx.Err()
					}
				}
			}
			if res.rows == nil && res.err == nil {
				res.err = errors.New("engine: no hidden rows delivered")
			}
			results[i] <- res
		}()
	}
	normalize := q.Normalize == nil || *q.Normalize
	resp := embeddingsResponse{Object: "list", Data: make([]embeddingData, len(prompts)), Model: sl.name,
		Usage: embeddingsUsage{PromptTokens: total, TotalTokens: total}}
	var fail error
	for i, c := range results {
		res := <-c
		if fail != nil {
			continue
		}
		if res.err != nil {
			fail = res.err
			continue
		}
		dim := len(res.rows) / poolRows(pooling, len(prompts[i]))
		if q.Dimensions != nil && *q.Dimensions != dim {
			fail = badRequest("dimensions", "this model's embeddings have %d dimensions; dimensions = %d cannot be served", dim, *q.Dimensions)
			continue
		}
		vec, err := pool(pooling, res.rows, dim, normalize)
		if err != nil {
			fail = internal(err)
			continue
		}
		d := embeddingData{Object: "embedding", Index: i, Embedding: vec}
		if q.EncodingFormat == "base64" {
			d.Embedding = encodeFloats(vec)
		}
		resp.Data[i] = d
	}
	if fail != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		var ae *apiError
		if !errors.As(fail, &ae) {
			fail = internal(fail)
		}
		writeError(w, fail)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// encodeFloats is OpenAI's base64 encoding of an embedding: the float32
// values' little-endian bytes, standard base64 with padding.
func encodeFloats(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}
