package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"kiln/server"
)

// The random test model never decides to call a tool, so these tests make
// its reply a call with structured output, which an auto tool choice does
// not constrain: guided_grammar on chat (a Hermes <tool_call> block), and
// on /v1/responses text.format with a template that teaches Llama 3's
// bare-JSON calls. The reply is then parsed as the model's own call
// would be, and its arguments must stream as they are generated.

// noteGrammar is a Hermes call of "note" with a 12-30 letter text.
const noteGrammar = `root ::= "<tool_call>\n{\"name\": \"note\", \"arguments\": {\"text\": \"" [a-z]{12,30} "\"}}\n</tool_call>"`

// noteParams is note's parameters.
var noteParams = map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}},
	"required": []string{"text"}}

// TestAutoToolArgumentsStreamChat: with tool_choice auto, a reply that is
// a <tool_call> block streams its call as it is generated: announced once
// (id, type, name), then its arguments in several deltas whose
// concatenation is the whole response's arguments; no content.
func TestAutoToolArgumentsStreamChat(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	c := ts.client(option.WithJSONSet("guided_grammar", noteGrammar))
	p := openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(200), Temperature: openai.Float(0),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("note it")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "note",
			Parameters: openai.FunctionParameters(noteParams)})}}
	whole, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	w := whole.Choices[0]
	if w.FinishReason != "tool_calls" || len(w.Message.ToolCalls) != 1 || w.Message.ToolCalls[0].Function.Name != "note" {
		t.Fatalf("whole: finish %q, message %s", w.FinishReason, w.Message.RawJSON())
	}
	stream := c.Chat.Completions.NewStreaming(context.Background(), p)
	var acc openai.ChatCompletionAccumulator
	argDeltas, announced := 0, 0
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		for _, d := range ch.Choices {
			if d.Delta.Content != "" {
				t.Errorf("content delta %q in a call's stream", d.Delta.Content)
			}
			for _, tc := range d.Delta.ToolCalls {
				if tc.ID != "" {
					announced++
					if tc.Function.Name != "note" || tc.Type != "function" || d.FinishReason != "" {
						t.Errorf("announcing delta %s", tc.RawJSON())
					}
				}
				if tc.Function.Arguments != "" {
					argDeltas++
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	s := acc.Choices[0]
	if s.FinishReason != "tool_calls" || len(s.Message.ToolCalls) != 1 || announced != 1 {
		t.Fatalf("streamed: finish %q, %d calls, announced %d times", s.FinishReason, len(s.Message.ToolCalls), announced)
	}
	sc, wc := s.Message.ToolCalls[0], w.Message.ToolCalls[0]
	if sc.Function.Arguments != wc.Function.Arguments || sc.Function.Name != "note" || !strings.HasPrefix(sc.ID, "call_") {
		t.Errorf("streamed call %s, whole %s", sc.RawJSON(), wc.RawJSON())
	}
	// 12-30 letters come one or a few per token: the arguments took more
	// than 3 deltas (measured: 42).
	if argDeltas < 4 {
		t.Errorf("arguments %s came in %d deltas: not streamed as generated", sc.Function.Arguments, argDeltas)
	}
	t.Logf("%s in %d deltas", sc.Function.Arguments, argDeltas)

	// Cut off by max_tokens inside the arguments: the whole response
	// cannot parse the call and gives the text; the stream has announced
	// the call and keeps it, with the arguments generated so far, and
	// sends no content.
	cut := p
	cut.MaxTokens = openai.Int(whole.Usage.CompletionTokens - 25) // inside the arguments' 42 deltas (measured)
	wholeCut, err := c.Chat.Completions.New(context.Background(), cut)
	if err != nil {
		t.Fatal(err)
	}
	if wc := wholeCut.Choices[0]; wc.FinishReason != "length" || len(wc.Message.ToolCalls) != 0 || !strings.HasPrefix(wc.Message.Content, "<tool_call>") {
		t.Errorf("cut, whole: finish %q, message %s", wc.FinishReason, wc.Message.RawJSON())
	}
	stream = c.Chat.Completions.NewStreaming(context.Background(), cut)
	acc = openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if sc := acc.Choices[0]; sc.FinishReason != "length" || sc.Message.Content != "" || len(sc.Message.ToolCalls) != 1 ||
		!strings.HasPrefix(sc.Message.ToolCalls[0].Function.Arguments, `{"text": "`) {
		t.Errorf("cut, streamed: finish %q, content %q, calls %+v", sc.FinishReason, sc.Message.Content, sc.Message.ToolCalls)
	}

	// Text first: it streams as content up to the <tool_call>, and the
	// call after it streams as it is generated.
	first := openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(200), Temperature: openai.Float(0), Messages: p.Messages, Tools: p.Tools}
	tc := ts.client(option.WithJSONSet("guided_grammar", strings.Replace(noteGrammar, `root ::= "`, `root ::= "ok. `, 1)))
	wholeFirst, err := tc.Chat.Completions.New(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	stream = tc.Chat.Completions.NewStreaming(context.Background(), first)
	acc = openai.ChatCompletionAccumulator{}
	argDeltas = 0
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		for _, d := range ch.Choices {
			for _, tc := range d.Delta.ToolCalls {
				if tc.Function.Arguments != "" {
					argDeltas++
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	wf, sf := wholeFirst.Choices[0], acc.Choices[0]
	if wf.FinishReason != "tool_calls" || wf.Message.Content != "ok." || len(wf.Message.ToolCalls) != 1 || sf.FinishReason != "tool_calls" ||
		len(sf.Message.ToolCalls) != 1 || sf.Message.ToolCalls[0].Function.Arguments != wf.Message.ToolCalls[0].Function.Arguments ||
		sf.Message.Content != "ok. " || argDeltas < 4 {
		t.Errorf("text first: whole %s, streamed %q and %+v in %d deltas", wf.Message.RawJSON(), sf.Message.Content, sf.Message.ToolCalls, argDeltas)
	}
}

// llama3Template teaches Llama 3's tool calls (toolFormat: the
// <|python_tag|> marker): a reply that is {"name": N, "parameters": {...}}
// is a call.
const llama3Template = `{% for m in messages %}{{ m.role }}: {{ m.content }}
{% endfor %}{% if tools %}tools (answer <|python_tag|>{"name": ..., "parameters": ...}): {{ tools | tojson }}
{% endif %}assistant:`

// TestAutoToolArgumentsStreamResponses: on /v1/responses with tool_choice
// auto, a reply that is a call streams function_call_arguments.delta
// events as it is generated, after the call's output_item.added; their
// concatenation is the call's arguments, whole and streamed.
func TestAutoToolArgumentsStreamResponses(t *testing.T) {
	ts := start(t, server.Config{}, &loader{tmpl: llama3Template})
	c := ts.client()
	callSchema := map[string]any{"type": "object", "properties": map[string]any{
		"name":       map[string]any{"const": "note"},
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string", "minLength": 12, "maxLength": 30}}, "required": []string{"text"}, "additionalProperties": false}},
		"required": []string{"name", "parameters"}, "additionalProperties": false}
	p := responses.ResponseNewParams{Model: "tiny", MaxOutputTokens: openai.Int(200), Temperature: openai.Float(0),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("note it")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "note", Parameters: noteParams}}},
		Text:  responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigParamOfJSONSchema("call", callSchema)}}
	whole := respond(t, c, p)
	if len(whole.Output) != 1 || whole.Output[0].Type != "function_call" {
		t.Fatalf("whole: output %s", whole.RawJSON())
	}
	wc := whole.Output[0].AsFunctionCall()
	s := accumulate(t, c, p)
	if s.final.Status != responses.ResponseStatusCompleted || len(s.final.Output) != 1 || s.final.Output[0].Type != "function_call" {
		t.Fatalf("streamed: %s", s.final.RawJSON())
	}
	fc := s.final.Output[0].AsFunctionCall()
	if fc.Name != "note" || fc.Arguments != wc.Arguments || s.args[fc.ID] != fc.Arguments || !strings.HasPrefix(fc.ID, "fc_") ||
		strings.TrimPrefix(fc.ID, "fc_") != strings.TrimPrefix(fc.CallID, "call_") {
		t.Errorf("streamed call %s (deltas %q), whole %s", fc.RawJSON(), s.args, wc.RawJSON())
	}
	deltas, added := 0, -1
	for k, typ := range s.types {
		switch typ {
		case "response.output_item.added":
			added = k
		case "response.function_call_arguments.delta":
			if added < 0 {
				t.Errorf("arguments before their item: %v", s.types)
			}
			deltas++
		case "response.output_text.delta":
			t.Errorf("text in a call's stream: %v", s.types)
		}
	}
	if deltas < 4 { // measured: 43
		t.Errorf("arguments %s came in %d deltas: not streamed as generated", fc.Arguments, deltas)
	}
	t.Logf("%s in %d deltas", fc.Arguments, deltas)
}

// TestToolInputStreamMessages: on /v1/messages a tool_use block's input
// streams as input_json_delta events while it is generated; the Anthropic
// SDK's accumulated message has the whole response's input.
func TestToolInputStreamMessages(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	c := ts.anthropicClient()
	p := greedyMessage(200, "note it")
	p.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "note",
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"text": map[string]any{"type": "string", "minLength": 12, "maxLength": 30}},
			Required: []string{"text"}, ExtraFields: map[string]any{"additionalProperties": false}}}}}
	p.ToolChoice = anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "note"}}
	whole, err := c.Messages.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if whole.StopReason != "tool_use" || len(whole.Content) != 1 {
		t.Fatalf("whole: %s", whole.RawJSON())
	}
	stream := c.Messages.NewStreaming(context.Background(), p)
	var acc anthropic.Message
	partial, deltas := "", 0
	for stream.Next() {
		ev := stream.Current()
		if err := acc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta" {
			partial += ev.Delta.PartialJSON
			deltas++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.StopReason != "tool_use" || len(acc.Content) != 1 || acc.Content[0].Name != "note" || !strings.HasPrefix(acc.Content[0].ID, "toolu_") {
		t.Fatalf("streamed: %+v", acc)
	}
	var a, b map[string]any
	if json.Unmarshal([]byte(partial), &a) != nil || json.Unmarshal(whole.Content[0].Input, &b) != nil || a["text"] != b["text"] || len(a) != 1 {
		t.Errorf("streamed input %q, whole %s", partial, whole.Content[0].Input)
	}
	if deltas < 4 { // measured: 43
		t.Errorf("input %s came in %d deltas: not streamed as generated", partial, deltas)
	}
	t.Logf("%s in %d deltas", partial, deltas)
}
