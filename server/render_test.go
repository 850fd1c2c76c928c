package server_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"kiln/server"
)

// rendered is the part of vLLM's GenerateRequest that llm-d's tokenizer
// reads, plus what kiln resolves; decoded strictly so a renamed field fails.
type rendered struct {
	RequestID        string          `json:"request_id"`
	TokenIDs         []int32         `json:"token_ids"`
	Features         json.RawMessage `json:"features"`
	SamplingParams   map[string]any  `json:"sampling_params"`
	Model            string          `json:"model"`
	Stream           bool            `json:"stream"`
	StreamOptions    json.RawMessage `json:"stream_options"`
	CacheSalt        *string         `json:"cache_salt"`
	Priority         int             `json:"priority"`
	KVTransferParams json.RawMessage `json:"kv_transfer_params"`
}

func strictDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

// tokens asks /tokenize for a body's token ids.
func (ts *testServer) tokens(t *testing.T, body string) []int32 {
	t.Helper()
	status, _, b := ts.post(t, "/tokenize", body)
	var tr struct{ Tokens []int32 }
	if status != 200 || json.Unmarshal(b, &tr) != nil || len(tr.Tokens) == 0 {
		t.Fatalf("tokenize %s: %d %s", body, status, b)
	}
	return tr.Tokens
}

func TestCompletionsRender(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	want := ts.tokens(t, `{"model":"tiny","prompt":"hello world"}`)

	status, _, b := ts.post(t, "/v1/completions/render", `{"model":"tiny","prompt":"hello world","max_tokens":7,"temperature":0,"seed":3}`)
	var rs []rendered
	if status != 200 {
		t.Fatalf("render: %d %s", status, b)
	}
	strictDecode(t, b, &rs)
	if len(rs) != 1 || !slices.Equal(rs[0].TokenIDs, want) {
		t.Fatalf("render gave %+v, /tokenize %v", rs, want)
	}
	r := rs[0]
	sp := r.SamplingParams
	if r.Model != "tiny" || r.RequestID == "" || string(r.Features) != "null" || sp["max_tokens"] != 7.0 || sp["temperature"] != 0.0 || sp["seed"] != 3.0 || sp["n"] != 1.0 {
		t.Errorf("render fields: %s", b)
	}

	// Absent max_tokens resolves to the room left in the context (4096).
	_, _, b = ts.post(t, "/v1/completions/render", `{"model":"tiny","prompt":"hello world"}`)
	strictDecode(t, b, &rs)
	if got := rs[0].SamplingParams["max_tokens"]; got != float64(4096-len(want)) {
		t.Errorf("max_tokens resolved to %v, want %d", got, 4096-len(want))
	}

	// One rendered request per prompt; token-id prompts come back as given.
	_, _, b = ts.post(t, "/v1/completions/render", `{"model":"tiny","prompt":[[5,6,7],[8,9]]}`)
	strictDecode(t, b, &rs)
	if len(rs) != 2 || !slices.Equal(rs[0].TokenIDs, []int32{5, 6, 7}) || !slices.Equal(rs[1].TokenIDs, []int32{8, 9}) || rs[0].RequestID == rs[1].RequestID {
		t.Errorf("two prompts rendered as %s", b)
	}

	// The same 400s as /v1/completions, and nothing runs.
	for _, body := range []string{
		`{"model":"tiny"}`,
		`{"model":"tiny","prompt":[999999]}`,
		`{"model":"tiny","prompt":"x","max_tokens":5000}`,
		`{"model":"tiny","prompt":"x","temperature":9}`,
		`{"model":"tiny","prompt":"x","suffix":"y"}`,
		`{"model":"tiny","prompt":"x","logprobs":99}`,
		`{"model":"tiny","prompt":`,
	} {
		status, _, b := ts.post(t, "/v1/completions/render", body)
		if status != 400 {
			t.Errorf("%s: %d %s, want 400", body, status, b)
			continue
		}
		errorOf(t, b)
	}
	if status, _, b := ts.post(t, "/v1/completions/render", `{"model":"nope","prompt":"x"}`); status != 404 {
		t.Errorf("unknown model: %d %s", status, b)
	}
}

func TestChatRender(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	msgs := `"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi there"}]`
	want := ts.tokens(t, `{"model":"tiny",`+msgs+`}`)

	status, _, b := ts.post(t, "/v1/chat/completions/render", `{"model":"tiny","max_tokens":2,"logprobs":true,"top_logprobs":3,`+msgs+`}`)
	if status != 200 {
		t.Fatalf("render: %d %s", status, b)
	}
	var r rendered
	strictDecode(t, b, &r)
	if !slices.Equal(r.TokenIDs, want) || r.SamplingParams["max_tokens"] != 2.0 || r.SamplingParams["logprobs"] != 3.0 {
		t.Fatalf("chat render %s, /tokenize %v", b, want)
	}

	// The ids are the prompt chat generation runs: its usage agrees.
	_, _, b = ts.post(t, "/v1/chat/completions", `{"model":"tiny","max_tokens":1,`+msgs+`}`)
	var cr struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if json.Unmarshal(b, &cr) != nil || cr.Usage.PromptTokens != len(r.TokenIDs) {
		t.Errorf("chat ran %d prompt tokens, render gave %d", cr.Usage.PromptTokens, len(r.TokenIDs))
	}

	// add_generation_prompt: false renders a different (shorter) prompt.
	_, _, b = ts.post(t, "/v1/chat/completions/render", `{"model":"tiny","add_generation_prompt":false,`+msgs+`}`)
	var r2 rendered
	strictDecode(t, b, &r2)
	if slices.Equal(r2.TokenIDs, r.TokenIDs) {
		t.Errorf("add_generation_prompt false rendered the same ids")
	}

	for _, body := range []string{
		`{"model":"tiny","messages":[]}`,
		`{"model":"tiny","messages":[{"role":"wizard","content":"x"}]}`,
		`{"model":"tiny","top_logprobs":2,` + msgs + `}`,
		`{"model":"tiny","tools":[{"type":"function"}],` + msgs + `}`,
		`{"model":"tiny","max_tokens":0,` + msgs + `}`,
	} {
		status, _, b := ts.post(t, "/v1/chat/completions/render", body)
		if status != 400 {
			t.Errorf("%s: %d %s, want 400", body, status, b)
			continue
		}
		errorOf(t, b)
	}
}
