package server_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"

	"kiln/server"
)

// TestToolArgumentsStream: a constrained tool choice streams its calls'
// arguments as they are generated (more than one delta each), and the
// accumulated calls are the whole response's (same seed, greedy).
func TestToolArgumentsStream(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	c := ts.client()
	tool := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "note",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{
			"text": map[string]any{"type": "string", "minLength": 12, "maxLength": 30}, "n": map[string]any{"type": "integer"}},
			"required": []string{"text", "n"}, "additionalProperties": false}})
	for _, choice := range []openai.ChatCompletionToolChoiceOptionUnionParam{
		{OfAuto: openai.String("required")},
		openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "note"}),
	} {
		p := openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(200), Temperature: openai.Float(0), Seed: openai.Int(3),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("note it")}, ParallelToolCalls: openai.Bool(false),
			Tools: []openai.ChatCompletionToolUnionParam{tool}, ToolChoice: choice}
		whole, err := c.Chat.Completions.New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		stream := c.Chat.Completions.NewStreaming(context.Background(), p)
		var acc openai.ChatCompletionAccumulator
		argDeltas := 0
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
		w, s := whole.Choices[0], acc.Choices[0]
		if w.FinishReason != "tool_calls" || s.FinishReason != "tool_calls" || len(w.Message.ToolCalls) != 1 || len(s.Message.ToolCalls) != 1 {
			t.Fatalf("finish %q / %q, %d / %d calls", w.FinishReason, s.FinishReason, len(w.Message.ToolCalls), len(s.Message.ToolCalls))
		}
		wc, sc := w.Message.ToolCalls[0], s.Message.ToolCalls[0]
		if sc.Function.Name != "note" || sc.Function.Arguments != wc.Function.Arguments || sc.ID == "" {
			t.Errorf("streamed call %+v, whole %+v", sc, wc)
		}
		if argDeltas < 3 {
			t.Errorf("arguments %q came in %d deltas: not streamed as generated", sc.Function.Arguments, argDeltas)
		}
		t.Logf("%q in %d deltas", sc.Function.Arguments, argDeltas)
	}
}
