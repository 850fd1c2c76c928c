package server_test

import (
	"encoding/json"
	"slices"
	"testing"

	"kiln/server"
)

// TestTextPartsJoinedByNewline: a message's text parts render as their
// texts joined by "\n" (vLLM's join), not run together.
func TestTextPartsJoinedByNewline(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	tokens := func(content string) []int32 {
		t.Helper()
		status, _, b := ts.post(t, "/tokenize", `{"model":"tiny","messages":[{"role":"user","content":`+content+`}]}`)
		if status != 200 {
			t.Fatalf("%d %s", status, b)
		}
		var r struct{ Tokens []int32 }
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r.Tokens
	}
	parts := tokens(`[{"type":"text","text":"What is"},{"type":"text","text":"the best book"}]`)
	if want := tokens(`"What is\nthe best book"`); !slices.Equal(parts, want) {
		t.Errorf("parts render as %v, want %v (joined by a newline)", parts, want)
	}
}
