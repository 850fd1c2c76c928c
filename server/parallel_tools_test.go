package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/openai/openai-go/v3"

	"kiln/server"
)

// TestParallelToolCalls: with tool_choice required, a logit bias that
// makes the model pick "," wherever the grammar allows one would run the
// list of calls on forever; parallel_tool_calls false allows exactly one
// call, the default at most 16 (maxToolCalls), and a reply cut off by
// max_tokens keeps its complete calls with content null, not the raw
// JSON.
func TestParallelToolCalls(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	c := ts.client()
	status, _, b := ts.post(t, "/tokenize", `{"model":"tiny","prompt":",","add_special_tokens":false,"return_token_strs":true}`)
	var comma struct {
		Tokens    []int32
		TokenStrs []string `json:"token_strs"`
	}
	if status != 200 || json.Unmarshal(b, &comma) != nil || len(comma.Tokens) == 0 || comma.TokenStrs[len(comma.Tokens)-1] != "," {
		t.Fatalf("tokenize \",\": %d %s", status, b)
	}
	comma.Tokens = comma.Tokens[len(comma.Tokens)-1:] // after the dummy-prefix space
	tool := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "w",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"c": map[string]any{"enum": []string{"a", "b"}}},
			"required": []string{"c"}, "additionalProperties": false}})
	params := func(maxTokens int64) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(maxTokens), Temperature: openai.Float(0), Seed: openai.Int(1),
			Messages:   []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather?")},
			Tools:      []openai.ChatCompletionToolUnionParam{tool},
			ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
			LogitBias:  map[string]int64{fmt.Sprint(comma.Tokens[0]): 100}}
	}

	one := params(400)
	one.ParallelToolCalls = openai.Bool(false)
	r, err := c.Chat.Completions.New(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	if ch := r.Choices[0]; ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 {
		t.Errorf("parallel_tool_calls false: finish %q, %d calls (%q)", ch.FinishReason, len(ch.Message.ToolCalls), ch.Message.Content)
	}

	r, err = c.Chat.Completions.New(context.Background(), params(2000))
	if err != nil {
		t.Fatal(err)
	}
	if ch := r.Choices[0]; ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 16 {
		t.Errorf("parallel: finish %q, %d calls, want 16 (%q)", ch.FinishReason, len(ch.Message.ToolCalls), ch.Message.Content)
	}

	// Cut off: the complete calls, content null (raw JSON to check the key).
	status, _, b = ts.post(t, "/v1/chat/completions", fmt.Sprintf(`{"model":"tiny","max_tokens":60,"temperature":0,"seed":1,`+
		`"messages":[{"role":"user","content":"weather?"}],"tool_choice":"required","logit_bias":{"%d":100},`+
		`"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object","properties":{"c":{"enum":["a","b"]}},"required":["c"],"additionalProperties":false}}}]}`, comma.Tokens[0]))
	var cut struct {
		Choices []struct {
			Message      map[string]json.RawMessage
			FinishReason string `json:"finish_reason"`
		}
	}
	if status != 200 || json.Unmarshal(b, &cut) != nil {
		t.Fatalf("cut: %d %s", status, b)
	}
	var calls []struct {
		Function struct{ Name, Arguments string }
	}
	msg := cut.Choices[0].Message
	json.Unmarshal(msg["tool_calls"], &calls)
	if cut.Choices[0].FinishReason != "length" || string(msg["content"]) != "null" || len(calls) == 0 {
		t.Errorf("cut off: %s; want finish length, content null, the complete calls", b)
	}
	for _, call := range calls {
		if call.Function.Name != "w" || !json.Valid([]byte(call.Function.Arguments)) {
			t.Errorf("cut off: call %+v", call)
		}
	}

	// Streamed: the calls as they were generated (tools_stream.go), so
	// the complete ones and the cut one's arguments so far, as vLLM
	// streams them; no content, finish_reason length.
	stream := c.Chat.Completions.NewStreaming(context.Background(), params(60))
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	m := acc.Choices[0].Message
	if acc.Choices[0].FinishReason != "length" || m.Content != "" || len(m.ToolCalls) < len(calls) || len(m.ToolCalls) > len(calls)+1 {
		t.Fatalf("streamed cut off: finish %q, content %q, %d calls; want length, none, %d complete and at most one cut", acc.Choices[0].FinishReason, m.Content, len(m.ToolCalls), len(calls))
	}
	for k, call := range m.ToolCalls {
		if k < len(calls) && (call.Function.Name != "w" || call.Function.Arguments != calls[k].Function.Arguments) {
			t.Errorf("streamed cut off: call %d %+v, want %+v", k, call.Function, calls[k].Function)
		}
		if k == len(calls) && json.Valid([]byte(call.Function.Arguments)) {
			t.Errorf("streamed cut off: the last call's arguments %q are whole, yet the whole reply did not keep it", call.Function.Arguments)
		}
	}
}
