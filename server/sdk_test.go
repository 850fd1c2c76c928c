package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"kiln/server"
)

// client is the official OpenAI Go SDK pointed at ts.
func (ts *testServer) client(opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(ts.URL + "/v1/"), option.WithAPIKey("sekrit"), option.WithMaxRetries(0)}, opts...)...)
}

func complete(t *testing.T, c openai.Client, p openai.CompletionNewParams, opts ...option.RequestOption) *openai.Completion {
	t.Helper()
	r, err := c.Completions.New(context.Background(), p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func greedyCompletion(prompt string, max int64) openai.CompletionNewParams {
	return openai.CompletionNewParams{Model: "tiny", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(prompt)},
		MaxTokens: openai.Int(max), Temperature: openai.Float(0)}
}

// TestSDKCompletions: whole and streamed greedy completions agree, and
// repeat; usage adds up.
func TestSDKCompletions(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client(option.WithJSONSet("ignore_eos", true)) // vLLM's extra: exact lengths
	p := greedyCompletion("once upon a time", 12)
	whole := complete(t, c, p)
	if len(whole.Choices) != 1 || whole.Object != "text_completion" || whole.Model != "tiny" || !strings.HasPrefix(whole.ID, "cmpl-") {
		t.Fatalf("response %+v", whole)
	}
	ch := whole.Choices[0]
	if ch.FinishReason != "length" || whole.Usage.CompletionTokens != 12 || whole.Usage.TotalTokens != whole.Usage.PromptTokens+12 || whole.Usage.PromptTokens < 2 {
		t.Fatalf("finish %q, usage %+v", ch.FinishReason, whole.Usage)
	}
	again := complete(t, c, p)
	if again.Choices[0].Text != ch.Text {
		t.Errorf("greedy differs between identical requests: %q vs %q", again.Choices[0].Text, ch.Text)
	}

	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Completions.NewStreaming(context.Background(), p)
	var text strings.Builder
	var finish string
	var usage *openai.CompletionUsage
	for stream.Next() {
		chunk := stream.Current()
		for _, cc := range chunk.Choices {
			text.WriteString(cc.Text)
			if cc.FinishReason != "" {
				finish = string(cc.FinishReason)
			}
		}
		if chunk.JSON.Usage.Valid() && chunk.Usage.TotalTokens > 0 {
			u := chunk.Usage
			usage = &u
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != ch.Text || finish != "length" {
		t.Errorf("streamed %q (%s), whole %q", text.String(), finish, ch.Text)
	}
	if usage == nil || usage.CompletionTokens != 12 || usage.PromptTokens != whole.Usage.PromptTokens {
		t.Errorf("stream usage %+v", usage)
	}
}

// TestSDKChat: whole and streamed chat agree (the SDK's accumulator), the
// role comes first, usage arrives last.
func TestSDKChat(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client(option.WithJSONSet("ignore_eos", true))
	p := openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(10), Temperature: openai.Float(0),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("tell me a story")}}
	whole, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Choices) != 1 || whole.Object != "chat.completion" || whole.Choices[0].Message.Role != "assistant" ||
		whole.Choices[0].FinishReason != "length" || whole.Usage.CompletionTokens != 10 {
		t.Fatalf("response %+v", whole)
	}
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(context.Background(), p)
	var acc openai.ChatCompletionAccumulator
	first := true
	for stream.Next() {
		chunk := stream.Current()
		if first && (len(chunk.Choices) != 1 || chunk.Choices[0].Delta.Role != "assistant") {
			t.Errorf("first chunk %s: want the assistant role", chunk.RawJSON())
		}
		first = false
		acc.AddChunk(chunk)
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := acc.Choices[0].Message.Content, whole.Choices[0].Message.Content; got != want {
		t.Errorf("streamed %q, whole %q", got, want)
	}
	if acc.Usage.CompletionTokens != 10 || acc.Usage.PromptTokens != whole.Usage.PromptTokens {
		t.Errorf("streamed usage %+v, whole %+v", acc.Usage, whole.Usage)
	}
	if acc.Choices[0].FinishReason != "length" {
		t.Errorf("finish %q", acc.Choices[0].FinishReason)
	}
}

// TestSDKSeedAndN: n = 2 gives two choices; a seed reproduces them.
func TestSDKSeedAndN(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client(option.WithJSONSet("ignore_eos", true))
	p := openai.CompletionNewParams{Model: "tiny", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("the cat")},
		MaxTokens: openai.Int(16), Temperature: openai.Float(1), Seed: openai.Int(42), N: openai.Int(2)}
	a := complete(t, c, p)
	b := complete(t, c, p)
	if len(a.Choices) != 2 || a.Choices[0].Index != 0 || a.Choices[1].Index != 1 {
		t.Fatalf("choices %+v", a.Choices)
	}
	for i := range 2 {
		if a.Choices[i].Text != b.Choices[i].Text {
			t.Errorf("choice %d: seeded requests differ: %q vs %q", i, a.Choices[i].Text, b.Choices[i].Text)
		}
	}
	if a.Choices[0].Text == a.Choices[1].Text {
		t.Errorf("both completions are %q: n = 2 should sample two (seeds 42 and 43)", a.Choices[0].Text)
	}
	if a.Usage.CompletionTokens != 32 {
		t.Errorf("usage %+v: want 32 completion tokens", a.Usage)
	}
	p.Seed = openai.Int(43)
	d := complete(t, c, p)
	if d.Choices[0].Text == a.Choices[0].Text && d.Choices[1].Text == a.Choices[1].Text {
		t.Errorf("another seed gave the same texts")
	}
}

// TestSDKLogprobs: both shapes, one entry per token, alternatives sorted
// and no more likely than... the distribution allows (logprob <= 0).
func TestSDKLogprobs(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client(option.WithJSONSet("ignore_eos", true))
	p := greedyCompletion("a b c", 6)
	p.Logprobs = openai.Int(3)
	r := complete(t, c, p)
	lp := r.Choices[0].Logprobs
	if len(lp.Tokens) != 6 || len(lp.TokenLogprobs) != 6 || len(lp.TopLogprobs) != 6 || len(lp.TextOffset) != 6 {
		t.Fatalf("completion logprobs %+v", lp)
	}
	if strings.Join(lp.Tokens, "") != r.Choices[0].Text {
		t.Errorf("tokens %q do not spell the text %q", lp.Tokens, r.Choices[0].Text)
	}
	for i, top := range lp.TopLogprobs {
		if len(top) < 1 || len(top) > 4 || lp.TokenLogprobs[i] > 0 {
			t.Errorf("token %d: top %v, logprob %v", i, top, lp.TokenLogprobs[i])
		}
		for _, v := range top { // greedy: the sampled token is the most likely
			if v > lp.TokenLogprobs[i]+1e-6 {
				t.Errorf("token %d: greedy pick %v is not the most likely of %v", i, lp.TokenLogprobs[i], top)
			}
		}
	}

	cp := openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(5), Temperature: openai.Float(0), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(3),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	cr, err := c.Chat.Completions.New(context.Background(), cp)
	if err != nil {
		t.Fatal(err)
	}
	content := cr.Choices[0].Logprobs.Content
	if len(content) != 5 {
		t.Fatalf("chat logprobs: %d entries, want 5", len(content))
	}
	for i, e := range content {
		if len(e.TopLogprobs) != 3 || e.Logprob > 0 || e.TopLogprobs[0].Logprob < e.TopLogprobs[2].Logprob || string(bytesOf(e.Bytes)) != e.Token && !strings.ContainsRune(e.Token, '\uFFFD') {
			t.Errorf("entry %d: %+v", i, e)
		}
	}
}

func bytesOf(b []int64) []byte {
	out := make([]byte, len(b))
	for i, x := range b {
		out[i] = byte(x)
	}
	return out
}

// TestSDKStop: a stop string cuts the text right before it.
func TestSDKStop(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client(option.WithJSONSet("ignore_eos", true))
	full := complete(t, c, greedyCompletion("one two three", 24)).Choices[0].Text
	// A stop string of two valid characters from the middle of the text
	// (the random-weight model also emits bytes that are no UTF-8).
	runes := []rune(full)
	stop := ""
	for i := len(runes) / 3; i+1 < len(runes) && stop == ""; i++ {
		if runes[i] != '\uFFFD' && runes[i+1] != '\uFFFD' {
			stop = string(runes[i : i+2])
		}
	}
	if stop == "" {
		t.Skipf("no stop string to pick from %q", full)
	}
	want := full[:strings.Index(full, stop)]
	p := greedyCompletion("one two three", 24)
	p.Stop = openai.CompletionNewParamsStopUnion{OfStringArray: []string{stop}}
	r := complete(t, c, p)
	if r.Choices[0].Text != want || r.Choices[0].FinishReason != "stop" {
		t.Errorf("stop %q: got %q (%s), want %q (stop) from %q", stop, r.Choices[0].Text, r.Choices[0].FinishReason, want, full)
	}
}

// TestSDKCachedTokens: the second request with a long shared prefix
// reports the prefix cache's hit in usage.prompt_tokens_details.
func TestSDKCachedTokens(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client()
	prompt := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 4)
	first := complete(t, c, greedyCompletion(prompt+"first", 2))
	second := complete(t, c, greedyCompletion(prompt+"second", 2))
	if first.Usage.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("cold request reports %d cached tokens", first.Usage.PromptTokensDetails.CachedTokens)
	}
	// The prompts differ in their last word only: the second reuses the
	// whole shared prefix, whole blocks and the first slots of the first
	// request's partial block (measured: 182 of 188 tokens, the first
	// 187; whole blocks alone gave 176).
	got, n := second.Usage.PromptTokensDetails.CachedTokens, first.Usage.PromptTokens
	if got < n-8 || got >= second.Usage.PromptTokens {
		t.Errorf("cached tokens %d of %d-token prompt (first had %d): want the shared prefix, all but the last few tokens", got, second.Usage.PromptTokens, n)
	}
}

// TestSDKErrors: the SDK surfaces kiln's statuses and envelopes as API errors.
func TestSDKErrors(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	for _, tc := range []struct {
		name   string
		c      openai.Client
		p      openai.CompletionNewParams
		status int
		code   string
	}{
		{"key", ts.client(option.WithAPIKey("wrong")), greedyCompletion("a", 2), 401, "invalid_api_key"},
		{"model", ts.client(), openai.CompletionNewParams{Model: "gpt-9", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("a")}}, 404, "model_not_found"},
		{"temperature", ts.client(), openai.CompletionNewParams{Model: "tiny", Temperature: openai.Float(-1), Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("a")}}, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Completions.New(context.Background(), tc.p)
			var apiErr *openai.Error
			if !errorsAs(err, &apiErr) {
				t.Fatalf("error %v is not an *openai.Error", err)
			}
			if apiErr.StatusCode != tc.status || apiErr.Message == "" || (tc.code != "" && apiErr.Code != tc.code) {
				t.Errorf("status %d code %q message %q; want %d %q", apiErr.StatusCode, apiErr.Code, apiErr.Message, tc.status, tc.code)
			}
		})
	}
}

// TestBeamSearch: vLLM's use_beam_search: width 1 is greedy; n = 3 gives
// three distinct beams (the engine's tests check the search itself);
// what beam search refuses is a 400.
func TestBeamSearch(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	status, _, b := ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"beam me","max_tokens":8,"temperature":0,"ignore_eos":true}`)
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	var greedy, beam1, beam3 struct {
		Choices []struct{ Text string } `json:"choices"`
	}
	json.Unmarshal(b, &greedy)
	status, _, b = ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"beam me","max_tokens":8,"use_beam_search":true,"ignore_eos":true}`)
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	json.Unmarshal(b, &beam1)
	if len(beam1.Choices) != 1 || beam1.Choices[0].Text != greedy.Choices[0].Text {
		t.Errorf("beam width 1 %+v, greedy %+v", beam1, greedy)
	}
	status, _, b = ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"beam me","max_tokens":8,"use_beam_search":true,"n":3,"length_penalty":0.5,"ignore_eos":true}`)
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	json.Unmarshal(b, &beam3)
	if len(beam3.Choices) != 3 || beam3.Choices[0].Text == beam3.Choices[1].Text || beam3.Choices[1].Text == beam3.Choices[2].Text {
		t.Errorf("3 beams: %+v", beam3)
	}
	if status, _, b := ts.post(t, "/v1/completions", `{"model":"tiny","prompt":"x","max_tokens":8,"use_beam_search":true,"stop":["a"]}`); status != 400 {
		t.Errorf("beam search with a stop string: %d %s", status, b)
	}
}
