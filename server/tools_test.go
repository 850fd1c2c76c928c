package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// TestRequiredToolsOwnDefs: over HTTP, tool_choice required with two tools
// whose parameters (pydantic-style) both define $defs/Addr, of different
// shapes, is served (it was a 400: the refs resolved against kiln's
// wrapper schema), and every call's arguments have its own tool's Addr.
func TestRequiredToolsOwnDefs(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	person := `{"$defs":{"Addr":{"properties":{"city":{"type":"string","maxLength":6}},"required":["city"],"type":"object","additionalProperties":false}},` +
		`"properties":{"home":{"$ref":"#/$defs/Addr"}},"required":["home"],"title":"Person","type":"object","additionalProperties":false}`
	locate := `{"$defs":{"Addr":{"properties":{"lat":{"enum":[1,2]}},"required":["lat"],"type":"object","additionalProperties":false}},` +
		`"properties":{"at":{"$ref":"#/$defs/Addr"}},"required":["at"],"type":"object","additionalProperties":false}`
	tools := `[{"type":"function","function":{"name":"person","parameters":` + person + `}},{"type":"function","function":{"name":"locate","parameters":` + locate + `}}]`
	calls := 0
	for seed := range 4 {
		status, _, body := ts.post(t, "/v1/chat/completions", fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":"where?"}],`+
			`"max_tokens":120,"temperature":0.8,"seed":%d,"tool_choice":"required","tools":%s}`, seed, tools))
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		var resp struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct {
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Choices[0].FinishReason != "tool_calls" {
			continue
		}
		for _, c := range resp.Choices[0].Message.ToolCalls {
			var args struct {
				Home *struct {
					City *string `json:"city"`
				} `json:"home"`
				At *struct {
					Lat *int `json:"lat"`
				} `json:"at"`
			}
			dec := json.NewDecoder(strings.NewReader(c.Function.Arguments))
			dec.DisallowUnknownFields()
			err := dec.Decode(&args)
			ok := err == nil && (c.Function.Name == "person" && args.Home != nil && args.Home.City != nil ||
				c.Function.Name == "locate" && args.At != nil && args.At.Lat != nil)
			if !ok {
				t.Errorf("call %s(%s): not its own tool's Addr (%v)", c.Function.Name, c.Function.Arguments, err)
			}
			calls++
		}
	}
	if calls == 0 {
		t.Fatal("no tool call finished within 120 tokens")
	}
}
