package server_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"kiln/server"
)

// TestToolCallMessageContentNull: a whole chat completion whose message
// carries tool_calls has "content": null, the key present, as OpenAI sends
// it (clients index message["content"]).
func TestToolCallMessageContentNull(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	for seed := range 4 {
		status, _, b := ts.post(t, "/v1/chat/completions", fmt.Sprintf(`{"model":"tiny","seed":%d,"max_tokens":120,"temperature":0.8,`+
			`"messages":[{"role":"user","content":"weather?"}],"tool_choice":{"type":"function","function":{"name":"w"}},`+
			`"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object","properties":{"c":{"enum":["a","b"]}},"required":["c"],"additionalProperties":false}}}]}`, seed))
		if status != 200 {
			t.Fatalf("%d %s", status, b)
		}
		var r struct {
			Choices []struct {
				Message      map[string]json.RawMessage
				FinishReason string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		msg := r.Choices[0].Message
		if r.Choices[0].FinishReason != "tool_calls" {
			continue
		}
		if c, ok := msg["content"]; !ok || string(c) != "null" || msg["tool_calls"] == nil {
			t.Fatalf("message %s: want content null beside tool_calls", b)
		}
		return
	}
	t.Fatal("no seed finished with a tool call")
}
