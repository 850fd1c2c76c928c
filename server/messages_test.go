package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"kiln/engine"
	"kiln/server"
)

// anthropicClient is the official Anthropic Go SDK pointed at ts (it
// sends the key as x-api-key, and anthropic-version).
func (ts *testServer) anthropicClient(opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(ts.URL), option.WithAPIKey("sekrit"), option.WithMaxRetries(0)}, opts...)...)
}

func greedyMessage(max int64, text string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: "tiny", MaxTokens: max, Temperature: anthropic.Float(0),
		System:   []anthropic.TextBlockParam{{Text: "You tell stories."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}}
}

// textOf is a message's text blocks, joined.
func textOf(m *anthropic.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// TestMessagesSDK: through the official Anthropic SDK, a greedy message
// whole and streamed (accumulated by the SDK's Message.Accumulate) agree
// in content, stop_reason and usage; max_tokens ends a message with
// stop_reason max_tokens after exactly that many tokens.
func TestMessagesSDK(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.anthropicClient()
	p := greedyMessage(12, "once upon a time")
	whole, err := c.Messages.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(whole.ID, "msg_") || whole.Type != "message" || whole.Role != "assistant" || whole.Model != "tiny" {
		t.Fatalf("message %+v", whole)
	}
	if whole.Usage.InputTokens < 2 || whole.Usage.OutputTokens < 1 || whole.Usage.OutputTokens > 12 {
		t.Fatalf("usage %+v", whole.Usage)
	}
	switch whole.StopReason {
	case "max_tokens":
		if whole.Usage.OutputTokens != 12 {
			t.Errorf("stop_reason max_tokens after %d of 12 tokens", whole.Usage.OutputTokens)
		}
	case "end_turn":
	default:
		t.Errorf("stop_reason %q", whole.StopReason)
	}

	stream := c.Messages.NewStreaming(context.Background(), p)
	var acc anthropic.Message
	events := 0
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
		events++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if textOf(&acc) != textOf(whole) || acc.StopReason != whole.StopReason || acc.Usage.OutputTokens != whole.Usage.OutputTokens ||
		acc.Usage.InputTokens != whole.Usage.InputTokens || !strings.HasPrefix(acc.ID, "msg_") || acc.Model != "tiny" {
		t.Errorf("streamed %q %s %+v, whole %q %s %+v", textOf(&acc), acc.StopReason, acc.Usage, textOf(whole), whole.StopReason, whole.Usage)
	}
	if events < 5 { // message_start, ping, block start/stop, message_delta, message_stop at least
		t.Errorf("%d stream events", events)
	}

	short, err := c.Messages.New(context.Background(), greedyMessage(3, "once upon a time"))
	if err != nil {
		t.Fatal(err)
	}
	if short.StopReason != "max_tokens" || short.Usage.OutputTokens != 3 || short.StopSequence != "" {
		t.Errorf("max_tokens 3: stop_reason %q, usage %+v", short.StopReason, short.Usage)
	}
}

// TestMessagesStopSequences: a stop sequence taken from a first greedy
// reply ends the second right before it, with stop_reason stop_sequence
// and stop_sequence the string that matched (whole and streamed).
func TestMessagesStopSequences(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	c := ts.anthropicClient()
	p := greedyMessage(40, "once upon a time")
	base, err := c.Messages.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	text := textOf(base)
	// Two printable characters from a third of the way in (the random
	// model's text holds replacement characters for bytes that were no
	// UTF-8, which a stop string could not match).
	runes := []rune(text)
	var stop string
	for at := len(runes) / 3; at+2 <= len(runes); at++ {
		if a, b := runes[at], runes[at+1]; unicode.IsGraphic(a) && unicode.IsGraphic(b) && a != utf8.RuneError && b != utf8.RuneError && a != ' ' {
			stop = string(runes[at : at+2])
			break
		}
	}
	if stop == "" {
		t.Fatalf("no stop string to take from %q", text)
	}
	want := text[:strings.Index(text, stop)]
	p.StopSequences = []string{"\x01never", stop}
	r, err := c.Messages.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if r.StopReason != "stop_sequence" || r.StopSequence != stop || textOf(r) != want {
		t.Fatalf("stop %q: stop_reason %q, stop_sequence %q, text %q (want %q)", stop, r.StopReason, r.StopSequence, textOf(r), want)
	}
	stream := c.Messages.NewStreaming(context.Background(), p)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.StopReason != "stop_sequence" || acc.StopSequence != stop || textOf(&acc) != want {
		t.Errorf("streamed: stop_reason %q, stop_sequence %q, text %q", acc.StopReason, acc.StopSequence, textOf(&acc))
	}
}

// TestMessagesToolRoundTrip: tool_choice any makes the random-weight
// model answer with a tool_use block whose input matches the schema
// (whole and streamed); its tool_result goes back in the next turn.
func TestMessagesToolRoundTrip(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.anthropicClient()
	weather := anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("the weather in a city"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string", "maxLength": 8}},
			Required: []string{"city"}, ExtraFields: map[string]any{"additionalProperties": false}}}}
	p := greedyMessage(200, "weather in Paris?")
	p.Tools = []anthropic.ToolUnionParam{weather}
	p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: anthropic.Bool(true)}}
	check := func(how string, m *anthropic.Message) anthropic.ContentBlockUnion {
		t.Helper()
		if m.StopReason != "tool_use" || len(m.Content) != 1 || m.Content[0].Type != "tool_use" {
			t.Fatalf("%s: stop_reason %q, content %+v", how, m.StopReason, m.Content)
		}
		u := m.Content[0]
		var input map[string]any
		if err := json.Unmarshal(u.Input, &input); err != nil {
			t.Fatalf("%s: input %s: %v", how, u.Input, err)
		}
		if city, ok := input["city"].(string); !ok || len(input) != 1 || utf8.RuneCountInString(city) > 8 {
			t.Fatalf("%s: input %s does not match the schema", how, u.Input)
		}
		if u.Name != "get_weather" || !strings.HasPrefix(u.ID, "toolu_") {
			t.Fatalf("%s: tool_use %+v", how, u)
		}
		return u
	}
	r, err := c.Messages.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	use := check("whole", r)

	stream := c.Messages.NewStreaming(context.Background(), p)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if su := check("streamed", &acc); !sameJSON(su.Input, use.Input) {
		t.Errorf("streamed input %s, whole %s", su.Input, use.Input)
	}

	// The call and its result go back; with the tools still offered
	// (auto) the model answers whatever it answers.
	next := p
	next.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
	next.MaxTokens = 8
	next.Messages = append(append([]anthropic.MessageParam{}, p.Messages...), r.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "sunny, 21C", false)))
	r2, err := c.Messages.New(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Usage.InputTokens <= r.Usage.InputTokens+r.Usage.OutputTokens/2 {
		t.Errorf("the second turn's prompt (%d tokens) does not hold the first's (%d) and its call", r2.Usage.InputTokens, r.Usage.InputTokens)
	}
	switch r2.StopReason {
	case "end_turn", "max_tokens", "tool_use":
	default:
		t.Errorf("second turn: stop_reason %q", r2.StopReason)
	}
}

// TestMessagesErrors: errors come in Anthropic's envelope with the
// right status, and the SDK reads them as *anthropic.Error.
func TestMessagesErrors(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	for _, tc := range []struct {
		name   string
		c      anthropic.Client
		p      anthropic.MessageNewParams
		status int
		typ    string
	}{
		{"unknown model", ts.anthropicClient(), func() anthropic.MessageNewParams { p := greedyMessage(4, "hi"); p.Model = "nope"; return p }(), 404, "not_found_error"},
		{"wrong key", ts.anthropicClient(option.WithAPIKey("wrong")), greedyMessage(4, "hi"), 401, "authentication_error"},
		{"max_tokens 0", ts.anthropicClient(), greedyMessage(0, "hi"), 400, "invalid_request_error"},
	} {
		_, err := tc.c.Messages.New(context.Background(), tc.p)
		var ae *anthropic.Error
		if !errorsAs(err, &ae) {
			t.Fatalf("%s: %v is no *anthropic.Error", tc.name, err)
		}
		if ae.StatusCode != tc.status || string(ae.Type()) != tc.typ {
			t.Errorf("%s: status %d, type %q; want %d %s (%v)", tc.name, ae.StatusCode, ae.Type(), tc.status, tc.typ, err)
		}
	}

	// The raw envelope, and the Bearer key accepted as on the other routes.
	status, _, b := ts.post(t, "/v1/messages", `{"model":"tiny","messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer sekrit")
	var env struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if status != 400 || jsonUnmarshal(b, &env) != nil || env.Type != "error" || env.Error.Type != "invalid_request_error" || !strings.Contains(env.Error.Message, "max_tokens") {
		t.Errorf("no max_tokens: %d %s", status, b)
	}
	status, _, b = ts.post(t, "/v1/messages", `{"model":"tiny","max_tokens":2,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]}`, "x-api-key", "sekrit")
	if status != 400 || !strings.Contains(string(b), `"invalid_request_error"`) || !strings.Contains(string(b), "image") {
		t.Errorf("an image block: %d %s", status, b)
	}
	status, _, b = ts.post(t, "/v1/messages", `{"model":"tiny","max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer sekrit")
	if status != 200 || !strings.Contains(string(b), `"type":"message"`) {
		t.Errorf("Bearer key: %d %s", status, b)
	}
}

// sameJSON reports whether two JSON texts hold the same value (the
// server's encoder escapes <, > and & where the stream's deltas need not).
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// TestMessagesStreamShape: the raw stream is Anthropic's named events,
// each event's name its data's type, in order: message_start, ping, one
// text block (start, deltas, stop), message_delta, message_stop; no
// OpenAI "[DONE]".
func TestMessagesStreamShape(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	status, h, b := ts.post(t, "/v1/messages", `{"model":"tiny","max_tokens":6,"temperature":0,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		"anthropic-version", "2023-06-01")
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %s: %s", status, h.Get("Content-Type"), b)
	}
	var names []string
	for _, ev := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
		name, data, ok := strings.Cut(ev, "\ndata: ")
		if !ok || !strings.HasPrefix(name, "event: ") {
			t.Fatalf("not a named event: %q", ev)
		}
		name = strings.TrimPrefix(name, "event: ")
		var v struct {
			Type string `json:"type"`
		}
		if err := jsonUnmarshal([]byte(data), &v); err != nil || v.Type != name {
			t.Fatalf("event %s: data %s", name, data)
		}
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
	}
	want := "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
}

// TestMessagesCountTokens: /v1/messages/count_tokens (through the SDK)
// counts the prompt a message request renders, its usage.input_tokens;
// other methods on the Messages routes are 405s in Anthropic's envelope.
func TestMessagesCountTokens(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	c := ts.anthropicClient()
	p := greedyMessage(2, "once upon a time")
	r, err := c.Messages.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{Model: "tiny", Messages: p.Messages,
		System: anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: p.System}})
	if err != nil {
		t.Fatal(err)
	}
	if n.InputTokens != r.Usage.InputTokens || n.InputTokens < 2 {
		t.Errorf("count_tokens %d, usage.input_tokens %d", n.InputTokens, r.Usage.InputTokens)
	}
	status, b := ts.get(t, "/v1/messages")
	if status != 405 || !strings.Contains(string(b), `"type":"error"`) || !strings.Contains(string(b), `"invalid_request_error"`) {
		t.Errorf("GET /v1/messages: %d %s", status, b)
	}
}

// TestMessagesBodyLimit: a body over --max-body-bytes is a 413,
// request_too_large in Anthropic's envelope, as on the other routes.
func TestMessagesBodyLimit(t *testing.T) {
	ts := start(t, server.Config{MaxBodyBytes: 1 << 10}, nil)
	body := `{"model":"tiny","max_tokens":2,"messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<10) + `"}]}`
	for _, path := range []string{"/v1/messages", "/v1/messages/count_tokens"} {
		status, _, b := ts.post(t, path, body)
		if status != 413 || !strings.Contains(string(b), `"type":"request_too_large"`) {
			t.Errorf("%s: %d %s", path, status, b)
		}
	}
}

// TestMessagesContextClamp: a max_tokens past what the context leaves
// (clients send a budget such as Claude Code's 32000) is clamped to the
// room, and a reply that fills it ends model_context_window_exceeded.
func TestMessagesContextClamp(t *testing.T) {
	ts := start(t, server.Config{}, &loader{cfg: engine.Config{MaxModelLen: 256}})
	c := ts.anthropicClient()
	// 4000: the SDK itself refuses a whole (unstreamed) message of 32000.
	r, err := c.Messages.New(context.Background(), greedyMessage(4000, "once upon a time"))
	if err != nil {
		t.Fatal(err)
	}
	room := 256 - r.Usage.InputTokens
	switch r.StopReason {
	case "model_context_window_exceeded":
		if r.Usage.OutputTokens != room {
			t.Errorf("context exceeded after %d tokens, %d left by the prompt", r.Usage.OutputTokens, room)
		}
	case "end_turn":
		if r.Usage.OutputTokens >= room {
			t.Errorf("end_turn after %d tokens, %d left", r.Usage.OutputTokens, room)
		}
	default:
		t.Errorf("stop_reason %q", r.StopReason)
	}
	t.Logf("%d prompt tokens, %d generated, %s", r.Usage.InputTokens, r.Usage.OutputTokens, r.StopReason)
}
