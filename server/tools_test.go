package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"

	"kiln/server"
)

// TestToolCalls: through the official SDK, a named tool choice and a
// required one make the random-weight model call tools whose arguments
// parse (whole and streamed); finish_reason is tool_calls.
func TestToolCalls(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client()
	weather := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "maxLength": 8}},
			"required": []string{"city"}, "additionalProperties": false}})
	clock := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_time",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"tz": map[string]any{"enum": []string{"UTC", "CET"}}},
			"required": []string{"tz"}, "additionalProperties": false}})
	base := openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(120), Temperature: openai.Float(0.8),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather in Paris?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weather, clock}}

	named := base
	named.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
		Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"}}}
	required := base
	required.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
	calls := 0
	for seed := range int64(4) {
		for _, p := range []openai.ChatCompletionNewParams{named, required} {
			p.Seed = openai.Int(seed)
			r, err := c.Chat.Completions.New(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			ch := r.Choices[0]
			if ch.FinishReason == "length" {
				continue
			}
			if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) == 0 {
				t.Errorf("finish %q, calls %+v, content %q", ch.FinishReason, ch.Message.ToolCalls, ch.Message.Content)
				continue
			}
			for _, tc := range ch.Message.ToolCalls {
				var args map[string]any
				if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
					t.Errorf("arguments %q: %v", tc.Function.Arguments, err)
				}
				switch tc.Function.Name {
				case "get_weather":
					if _, ok := args["city"].(string); !ok {
						t.Errorf("get_weather arguments %v", args)
					}
				case "get_time":
					if tz := args["tz"]; tz != "UTC" && tz != "CET" {
						t.Errorf("get_time arguments %v", args)
					}
				default:
					t.Errorf("unknown tool %q", tc.Function.Name)
				}
				if tc.ID == "" || p.ToolChoice.OfFunctionToolChoice != nil && tc.Function.Name != "get_weather" {
					t.Errorf("call %+v", tc)
				}
				calls++
			}
		}
	}
	if calls == 0 {
		t.Fatal("no tool call finished within 120 tokens")
	}

	// Streamed: the SDK's accumulator assembles the same call.
	named.Seed = openai.Int(1)
	whole, err := c.Chat.Completions.New(context.Background(), named)
	if err != nil {
		t.Fatal(err)
	}
	stream := c.Chat.Completions.NewStreaming(context.Background(), named)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if whole.Choices[0].FinishReason == "tool_calls" {
		got, want := acc.Choices[0].Message.ToolCalls, whole.Choices[0].Message.ToolCalls
		if len(got) != 1 || got[0].Function.Name != want[0].Function.Name || got[0].Function.Arguments != want[0].Function.Arguments ||
			acc.Choices[0].FinishReason != "tool_calls" {
			t.Errorf("streamed %+v (%s), whole %+v", got, acc.Choices[0].FinishReason, want)
		}
	}
}
