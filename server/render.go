package server

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// The render endpoints (vLLM's /v1/completions/render and
// /v1/chat/completions/render) answer with the request kiln would run for a
// completions or chat body, without running it: the prompt as token ids and
// the sampling parameters as resolved. llm-d's endpoint picker calls them
// (its tokenizer data producer, vLLM HTTP backend) so that prefix-aware
// routing hashes the replicas' own tokenization; it reads token_ids (and
// features, which kiln leaves null: it has no multimodal inputs).
//
// The body is checked exactly as the generating endpoint checks it (same
// 400s), so a request that renders is one that would be accepted.

// renderedRequest is vLLM's GenerateRequest (entrypoints/serve/disagg):
// one per prompt for completions, one for chat.
type renderedRequest struct {
	RequestID        string          `json:"request_id"`
	TokenIDs         []int32         `json:"token_ids"`
	Features         json.RawMessage `json:"features"` // always null: no multimodal inputs
	SamplingParams   renderedParams  `json:"sampling_params"`
	Model            string          `json:"model"`
	Stream           bool            `json:"stream"`
	StreamOptions    *streamOptions  `json:"stream_options"`
	CacheSalt        *string         `json:"cache_salt"`
	Priority         int             `json:"priority"`
	KVTransferParams json.RawMessage `json:"kv_transfer_params"` // always null
}

// renderedParams is the subset of vLLM's SamplingParams that kiln
// implements, with the values kiln resolved (defaults filled in,
// max_tokens against the prompt's room in the context).
type renderedParams struct {
	N                 int                `json:"n"`
	Temperature       float32            `json:"temperature"`
	TopP              float32            `json:"top_p"`
	TopK              int                `json:"top_k"` // 0: off
	MinP              float32            `json:"min_p"`
	PresencePenalty   float32            `json:"presence_penalty"`
	FrequencyPenalty  float32            `json:"frequency_penalty"`
	RepetitionPenalty float32            `json:"repetition_penalty"`
	Seed              *int64             `json:"seed"`
	Stop              []string           `json:"stop"`
	StopTokenIDs      []int32            `json:"stop_token_ids"`
	IgnoreEOS         bool               `json:"ignore_eos"`
	MaxTokens         int                `json:"max_tokens"`
	Logprobs          *int               `json:"logprobs"`
	LogitBias         map[string]float32 `json:"logit_bias"`
}

// rendered builds the answer for each prompt of a checked job.
func (j *job) rendered(q *samplingRequest, id string, logprobs *int) []renderedRequest {
	p := j.params
	out := make([]renderedRequest, len(j.prompts))
	for i, prompt := range j.prompts {
		rp := renderedParams{N: j.n, Temperature: p.Temperature, TopP: p.TopP, TopK: p.TopK, MinP: p.MinP,
			PresencePenalty: p.PresencePenalty, FrequencyPenalty: p.FrequencyPenalty, RepetitionPenalty: p.RepetitionPenalty,
			Seed: q.Seed, Stop: p.Stop, StopTokenIDs: p.StopTokens, IgnoreEOS: q.IgnoreEOS, MaxTokens: j.maxTokens[i], Logprobs: logprobs}
		if rp.Stop == nil {
			rp.Stop = []string{}
		}
		if rp.StopTokenIDs == nil {
			rp.StopTokenIDs = []int32{}
		}
		if len(q.LogitBias) > 0 {
			rp.LogitBias = make(map[string]float32, len(q.LogitBias))
			for k, v := range q.LogitBias {
				rp.LogitBias[k] = float32(v)
			}
		}
		out[i] = renderedRequest{RequestID: id, TokenIDs: prompt, Features: json.RawMessage("null"), SamplingParams: rp,
			Model: q.Model, Stream: q.Stream, StreamOptions: q.StreamOptions, Priority: q.Priority,
			KVTransferParams: json.RawMessage("null")}
		if len(j.prompts) > 1 {
			out[i].RequestID = id + "-" + strconv.Itoa(i)
		}
	}
	return out
}

// handleCompletionsRender serves POST /v1/completions/render: a JSON list
// with one rendered request per prompt.
func (s *Server) handleCompletionsRender(w http.ResponseWriter, r *http.Request) {
	var q completionRequest
	sl := s.openRequest(w, r, &q)
	if sl == nil {
		return
	}
	defer s.reg.release(sl)
	j, err := s.completionJob(sl, &q)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, j.rendered(&q.samplingRequest, newID("cmpl-"), q.Logprobs))
}

// handleChatRender serves POST /v1/chat/completions/render: one rendered
// request, the conversation through the model's chat template.
func (s *Server) handleChatRender(w http.ResponseWriter, r *http.Request) {
	var q chatRequest
	sl := s.openRequest(w, r, &q)
	if sl == nil {
		return
	}
	defer s.reg.release(sl)
	prompt, _, _, err := chatPrompt(sl.m, &q)
	if err != nil {
		writeError(w, err)
		return
	}
	j, err := s.newJob(sl, &q.samplingRequest, [][]int32{prompt}, "messages")
	if err != nil {
		writeError(w, err)
		return
	}
	var logprobs *int
	if q.Logprobs {
		k := 0
		if q.TopLogprobs != nil {
			k = *q.TopLogprobs
		}
		if err := s.checkLogprobs("top_logprobs", k); err != nil {
			writeError(w, err)
			return
		}
		logprobs = &k
	} else if q.TopLogprobs != nil && *q.TopLogprobs > 0 {
		writeError(w, badRequest("top_logprobs", "top_logprobs needs logprobs: true"))
		return
	}
	writeJSON(w, http.StatusOK, j.rendered(&q.samplingRequest, newID("chatcmpl-"), logprobs)[0])
}
