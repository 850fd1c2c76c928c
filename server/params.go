package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"kiln/sample"
)

// Bounds on a request besides sample.Params' own.
const (
	maxN       = 128 // completions per request (n times the prompts)
	maxPrompts = 64  // prompts in one /v1/completions request
)

// decodeBody reads one JSON value into v. A body over the limit is 413;
// malformed JSON, a wrong type or trailing data is 400 naming the field by
// its path in the request (pathAt).
// readBody reads the whole body, at most limit bytes, into one buffer of
// the declared Content-Length (io.ReadAll's doubling would allocate twice
// a large body's size).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n > 0 && n <= limit {
		// net/http ends the body at Content-Length (a shorter one is
		// io.ErrUnexpectedEOF here).
		buf := make([]byte, n)
		_, err := io.ReadFull(rd, buf)
		return buf, err
	}
	return io.ReadAll(rd)
}

func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := readBody(w, r, limit)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "body_too_large",
			Message: fmt.Sprintf("the request body exceeds %d bytes", mbe.Limit)}
	}
	if err != nil {
		return badRequest("", "reading the body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "the body is empty; want a JSON object")
	}
	// json.Unmarshal rather than a Decoder: no second copy of the body in
	// the decoder's buffer, and trailing data is its syntax error.
	err = json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var (
		se *json.SyntaxError
		te *json.UnmarshalTypeError
		ae *apiError
	)
	switch {
	case errors.As(err, &ae): // a field's own UnmarshalJSON said what is wrong
		return ae
	case errors.As(err, &se):
		return badRequest("", "the body is not valid JSON: %v (at byte %d)", se, se.Offset)
	case errors.As(err, &te):
		field := pathAt(body, te.Offset)
		if field == "" {
			return badRequest("", "the body must be a JSON object, not %s", te.Value)
		}
		return badRequest(field, "%s must not be %s (want %s)", field, te.Value, jsonKind(te.Type.Kind().String()))
	case errors.Is(err, io.EOF):
		return badRequest("", "the body is empty; want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "the body is not valid JSON: it ends early")
	}
	return badRequest("", "the body is not a valid request: %v", err)
}

// checkLogprobs bounds the top logprobs a request asks per token (param
// is top_logprobs or logprobs) by Config.MaxLogprobs: n completions times
// max_tokens times k entries is the response's size.
func (s *Server) checkLogprobs(param string, k int) error {
	limit := max(s.cfg.MaxLogprobs, 0)
	if k < 0 || k > limit {
		return badRequest(param, "%s %d must be in [0, %d] (the server's --max-logprobs)", param, k, limit)
	}
	return nil
}

// jsonKind names a Go kind as the JSON type a client should send.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "an integer"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case k == "slice":
		return "a list"
	case k == "map", k == "struct":
		return "an object"
	}
	return k
}

// params turns the shared fields into sampling parameters (OpenAI's
// defaults for what is absent) and checks them against the vocabulary.
// MaxTokens is left to the caller, which knows the prompt's length.
func (q *samplingRequest) params(vocab int) (sample.Params, error) {
	p := sample.Defaults()
	f32 := func(name string, v *float64, dst *float32) error {
		if v == nil {
			return nil
		}
		if math.IsNaN(*v) || math.IsInf(*v, 0) || math.Abs(*v) > math.MaxFloat32 {
			return badRequest(name, "%s must be a finite number", name)
		}
		*dst = float32(*v)
		return nil
	}
	if err := errors.Join(
		f32("temperature", q.Temperature, &p.Temperature),
		f32("top_p", q.TopP, &p.TopP),
		f32("min_p", q.MinP, &p.MinP),
		f32("presence_penalty", q.PresencePenalty, &p.PresencePenalty),
		f32("frequency_penalty", q.FrequencyPenalty, &p.FrequencyPenalty),
		f32("repetition_penalty", q.RepetitionPenalty, &p.RepetitionPenalty),
	); err != nil {
		return p, firstAPIError(err)
	}
	if q.Temperature != nil && (*q.Temperature < 0 || *q.Temperature > 2) {
		return p, badRequest("temperature", "temperature %v must be in [0, 2]", *q.Temperature)
	}
	if q.TopK != nil {
		switch k := *q.TopK; {
		case k == -1 || k == 0: // vLLM's and OpenAI-style "off"
		case k < -1:
			return p, badRequest("top_k", "top_k %d must be -1 or 0 (off) or positive", k)
		default:
			p.TopK = k
		}
	}
	if q.Seed != nil {
		s := uint64(*q.Seed)
		p.Seed = &s
	}
	stops, err := parseStop(q.Stop)
	if err != nil {
		return p, err
	}
	if len(stops) > sample.MaxStops {
		return p, badRequest("stop", "stop holds %d strings, at most %d allowed", len(stops), sample.MaxStops)
	}
	if len(q.StopTokenIDs) > sample.MaxStopTokens {
		return p, badRequest("stop_token_ids", "stop_token_ids holds %d ids, at most %d allowed", len(q.StopTokenIDs), sample.MaxStopTokens)
	}
	if len(q.LogitBias) > sample.MaxLogitBias {
		return p, badRequest("logit_bias", "logit_bias holds %d entries, at most %d allowed", len(q.LogitBias), sample.MaxLogitBias)
	}
	p.Stop = stops
	p.StopTokens = q.StopTokenIDs
	if len(q.LogitBias) > 0 {
		p.LogitBias = make(map[int32]float32, len(q.LogitBias))
		for k, v := range q.LogitBias {
			id, err := strconv.ParseInt(k, 10, 32)
			if err != nil || id < 0 || int(id) >= vocab {
				return p, badRequest("logit_bias", "logit_bias key %q is not a token id in [0, %d)", k, vocab)
			}
			if math.IsNaN(v) || v < -100 || v > 100 {
				return p, badRequest("logit_bias", "logit_bias[%s] = %v must be in [-100, 100]", k, v)
			}
			p.LogitBias[int32(id)] = float32(v)
		}
	}
	for i, id := range p.StopTokens {
		if id < 0 || int(id) >= vocab {
			return p, badRequest("stop_token_ids", "stop_token_ids[%d] = %d is not a token id in [0, %d)", i, id, vocab)
		}
	}
	if err := p.Validate(); err != nil {
		return p, validationError(err)
	}
	return p, nil
}

// validationError maps sample.Params.Validate's message ("sample: top_p
// ...") onto a 400 naming the request field: the message's first word when
// it is one (sample's names are the API's but for stop_tokens), else none
// (a count such as "65 stop strings" is checked before, naming its field).
func validationError(err error) *apiError {
	msg := strings.TrimPrefix(strings.SplitN(err.Error(), "\n", 2)[0], "sample: ")
	word, _, _ := strings.Cut(msg, " ")
	word, _, _ = strings.Cut(word, "[")
	param, ok := sampleFields[word]
	if !ok {
		param = ""
	}
	return badRequest(param, "%s", msg)
}

// sampleFields maps the names sample.Params.Validate's messages begin
// with onto the request fields they come from.
var sampleFields = map[string]string{
	"temperature": "temperature", "top_p": "top_p", "min_p": "min_p", "top_k": "top_k",
	"repetition_penalty": "repetition_penalty", "presence_penalty": "presence_penalty",
	"frequency_penalty": "frequency_penalty", "logit_bias": "logit_bias", "max_tokens": "max_tokens",
	"stop": "stop", "stop_tokens": "stop_token_ids", "top_logprobs": "top_logprobs",
}

func firstAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return badRequest("", "%v", err)
}

// parseStop reads "stop": null, a string, or a list of strings.
func parseStop(raw json.RawMessage) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badRequest("stop", "stop must be a string or a list of strings")
	}
	for i, s := range many {
		if s == "" {
			return nil, badRequest("stop", "stop[%d] is empty", i)
		}
	}
	return many, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// completions returns n (1 when absent), checked against the model.
func (q *samplingRequest) completions(maxSeqs, prompts int) (int, error) {
	n := 1
	if q.N != nil {
		n = *q.N
	}
	if n < 1 || n*prompts > min(maxN, maxSeqs) {
		why := "" // the operator's limit is named, so that the client's operator knows what to change
		if maxSeqs < maxN {
			why = fmt.Sprintf(" (this server runs at most %d sequences at once: kiln serve --max-num-seqs %d)", maxSeqs, maxSeqs)
		}
		return 0, badRequest("n", "n = %d for %d prompt(s): want 1 up to %d completions in all%s", n, prompts, min(maxN, maxSeqs), why)
	}
	return n, nil
}

// maxTokens resolves max_tokens / max_completion_tokens against the room
// the prompt leaves in the context: absent means all of it; more than
// there is is a 400 with vLLM's wording.
func (q *samplingRequest) maxTokens(promptLen, maxModelLen int) (int, error) {
	req := q.MaxCompletionTokens
	name := "max_completion_tokens"
	if req == nil {
		req, name = q.MaxTokens, "max_tokens"
	}
	room := maxModelLen - promptLen
	if room <= 0 {
		return 0, badRequest("messages", "this model's maximum context length is %d tokens, but the prompt has %d: nothing is left for the completion", maxModelLen, promptLen)
	}
	if req == nil {
		return room, nil
	}
	if *req < 1 {
		return 0, badRequest(name, "%s %d must be at least 1", name, *req)
	}
	if *req > room {
		return 0, badRequest(name, "this model's maximum context length is %d tokens; you asked for %d (%d in the prompt, %d for the completion): reduce the prompt or %s",
			maxModelLen, promptLen+*req, promptLen, *req, name)
	}
	return *req, nil
}
