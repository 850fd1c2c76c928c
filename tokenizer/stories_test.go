package tokenizer

import (
	"slices"
	"testing"
)

// TestStories260K checks the prompt encoding shared/models/README.md records
// for stories260K (llama.cpp gives the same ids).
func TestStories260K(t *testing.T) {
	tok := ggufTokenizer(t, "stories260K.gguf")
	got := tok.EncodePrompt("Once upon a time")
	want := []int32{1, 403, 407, 261, 378}
	if !slices.Equal(got, want) {
		t.Fatalf("EncodePrompt = %v, want %v", got, want)
	}
	if s := tok.Decode(got[1:]); s != "Once upon a time" {
		t.Errorf("Decode = %q", s)
	}
}
