package server_test

import "testing"

// FuzzRender posts the same bodies to both render endpoints: never a 500,
// an error envelope for every refusal, valid JSON for every success.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		`{"model":"tiny","prompt":"hello","max_tokens":4}`,
		`{"model":"tiny","prompt":[[1,2],[3]],"n":2,"logprobs":2,"seed":-1,"stop":"x","logit_bias":{"5":1}}`,
		`{"model":"tiny","messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":2}`,
		`{"model":"tiny","messages":[{"role":"system","content":[{"type":"text","text":"a"}]}],"add_generation_prompt":false}`,
		`{"model":"tiny","prompt":null,"messages":null}`, `[]`, `{`,
	} {
		f.Add(s)
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzBody(t, h, "/v1/completions/render", body)
		fuzzBody(t, h, "/v1/chat/completions/render", body)
	})
}
