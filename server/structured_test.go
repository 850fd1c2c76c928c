package server_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"kiln/server"
)

// TestStructuredOutput: through the official SDK, json_schema replies of
// the random-weight model that finish with "stop" parse and validate;
// json_object gives an object; choices and grammars give what they allow.
func TestStructuredOutput(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client()
	schemaText := `{"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":120},
		"tags":{"type":"array","items":{"enum":["a","b","c"]},"maxItems":3}},"required":["name","age"],"additionalProperties":false}`
	var schema map[string]any
	if err := json.Unmarshal([]byte(schemaText), &schema); err != nil {
		t.Fatal(err)
	}
	compiler := jsonschema.NewCompiler()
	if err := compiler.AddResource("s.json", schema); err != nil {
		t.Fatal(err)
	}
	validator, err := compiler.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	stops := 0
	for seed := range int64(6) {
		p := openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(200), Temperature: openai.Float(1), Seed: openai.Int(seed), N: openai.Int(2),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("who are you?")},
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
				JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "person", Schema: schema, Strict: openai.Bool(true)}}}}
		r, err := c.Chat.Completions.New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range r.Choices {
			if ch.FinishReason != "stop" {
				continue // ran out of tokens inside the object: not checkable
			}
			stops++
			var v any
			if err := json.Unmarshal([]byte(ch.Message.Content), &v); err != nil {
				t.Errorf("seed %d: reply %q is not JSON: %v", seed, ch.Message.Content, err)
				continue
			}
			if err := validator.Validate(v); err != nil {
				t.Errorf("seed %d: reply %q does not validate: %v", seed, ch.Message.Content, err)
			}
		}
	}
	if stops == 0 {
		t.Errorf("no json_schema reply finished within 200 tokens")
	}

	post := func(body string) (string, string) {
		t.Helper()
		status, _, b := ts.post(t, "/v1/completions", body, "Authorization", "Bearer sekrit")
		if status != 200 {
			t.Fatalf("%s: %d %s", body, status, b)
		}
		var r struct {
			Choices []struct {
				Text         string `json:"text"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		json.Unmarshal(b, &r)
		return r.Choices[0].Text, r.Choices[0].FinishReason
	}
	for seed := range 4 {
		text, reason := post(`{"model":"tiny","prompt":"pick","temperature":1,"seed":` + string(rune('0'+seed)) + `,"guided_choice":["red","green","blue \"sky\""]}`)
		if (text != "red" && text != "green" && text != `blue "sky"`) || reason != "stop" {
			t.Errorf("guided_choice: %q (%s)", text, reason)
		}
		text, reason = post(`{"model":"tiny","prompt":"count","temperature":1,"seed":` + string(rune('0'+seed)) + `,"structured_outputs":{"grammar":"root ::= [0-9]{1,3} (\",\" [0-9]{1,3}){2}"}}`)
		parts := strings.Split(text, ",")
		if len(parts) != 3 || reason != "stop" {
			t.Errorf("grammar: %q (%s)", text, reason)
		}
		text, reason = post(`{"model":"tiny","prompt":"date","temperature":1,"seed":` + string(rune('0'+seed)) + `,"guided_regex":"20[0-9]{2}-(0[1-9]|1[0-2])-[0-2][0-9]"}`)
		if !regexp.MustCompile(`^20[0-9]{2}-(0[1-9]|1[0-2])-[0-2][0-9]$`).MatchString(text) || reason != "stop" {
			t.Errorf("guided_regex: %q (%s)", text, reason)
		}
		text, reason = post(`{"model":"tiny","prompt":"obj","temperature":0.7,"max_tokens":300,"seed":` + string(rune('0'+seed)) + `,"response_format":{"type":"json_object"}}`)
		var obj map[string]any
		if reason == "stop" && json.Unmarshal([]byte(text), &obj) != nil {
			t.Errorf("json_object: %q is no object", text)
		}
	}
}
