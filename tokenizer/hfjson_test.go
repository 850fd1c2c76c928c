package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"kiln/internal/testutil"
)

// hfGolden is a file written by scripts/hf-tokenizer-goldens.js: the ids the
// Hugging Face tokenizers library (npm `tokenizers`) gives for each text.
type hfGolden struct {
	Library       string `json:"library"`
	TokenizerJSON string `json:"tokenizer_json"`
	Cases         []struct {
		Text          string  `json:"text"`
		IDs           []int32 `json:"ids"`
		IDsAddSpecial []int32 `json:"ids_add_special"`
		Decoded       string  `json:"decoded"`
	} `json:"cases"`
}

func readHFGolden(t *testing.T, name string) *hfGolden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hf", name))
	if err != nil {
		t.Fatal(err)
	}
	var g hfGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatalf("%s: no cases", name)
	}
	return &g
}

// checkHFGolden compares Encode (parsing specials: the library always
// splits added tokens out) and EncodePrompt (its add_special_tokens) with
// the library's ids.
func checkHFGolden(t *testing.T, tok *Tokenizer, g *hfGolden) {
	t.Helper()
	bad := 0
	for _, c := range g.Cases {
		if got := tok.Encode(c.Text, true); !slices.Equal(got, c.IDs) {
			bad++
			if bad <= 10 {
				t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
			}
		}
		if got := tok.EncodePrompt(c.Text); !slices.Equal(got, c.IDsAddSpecial) {
			bad++
			if bad <= 10 {
				t.Errorf("EncodePrompt(%q)\n got %v\nwant %v", c.Text, got, c.IDsAddSpecial)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d encodings differ from %s", bad, 2*len(g.Cases), g.Library)
	}
}

func TestHFTinyStories(t *testing.T) {
	dir := filepath.Join(testutil.SharedModels(t), "tinystories-656k")
	v, err := LoadHFTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	checkHFGolden(t, tok, readHFGolden(t, "tinystories-656k.json"))
}

// TestHFTinyStoriesConfig checks what tokenizer_config.json and
// generation_config.json add: BOS/EOS, add_bos_token, and the decoder's
// output (the library's decode, special tokens kept).
func TestHFTinyStoriesConfig(t *testing.T) {
	v, err := LoadHFTokenizer(filepath.Join(testutil.SharedModels(t), "tinystories-656k"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Model != ModelHFBPE || v.BOS != 1 || v.EOS != 2 || v.UNK != 0 || !v.AddBOS || v.AddEOS || v.ChatTemplate != "" {
		t.Errorf("model %q BOS %d EOS %d UNK %d AddBOS %v AddEOS %v template %q; want hf-bpe 1 2 0 true false \"\"",
			v.Model, v.BOS, v.EOS, v.UNK, v.AddBOS, v.AddEOS, v.ChatTemplate)
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	if !tok.IsEOG(2) {
		t.Error("EOS 2 does not end generation")
	}
	for _, c := range readHFGolden(t, "tinystories-656k.json").Cases {
		if got := tok.Decode(c.IDs); got != c.Decoded {
			t.Errorf("Decode(%v) = %q, want %q", c.IDs, got, c.Decoded)
		}
	}
}

// TestHFQwen2 loads a byte-level tokenizer.json (Qwen2's layout, built by
// the golden script from the shared vocab.json and merges.txt): it maps onto
// the gpt2 model with Pre "qwen2", and must match the library's ids.
func TestHFQwen2(t *testing.T) {
	g := readHFGolden(t, "qwen2.json")
	dir := filepath.Join(testutil.SharedModels(t), "tokenizers")
	vocabJSON, err := os.ReadFile(filepath.Join(dir, "qwen2-vocab.json"))
	if err != nil {
		t.Skip(err)
	}
	mergesTXT, err := os.ReadFile(filepath.Join(dir, "qwen2-merges.txt"))
	if err != nil {
		t.Skip(err)
	}
	merges, err := parseMerges(mergesTXT)
	if err != nil {
		t.Fatal(err)
	}
	var file, model map[string]json.RawMessage
	if err := json.Unmarshal([]byte(g.TokenizerJSON), &file); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(file["model"], &model); err != nil {
		t.Fatal(err)
	}
	model["vocab"] = vocabJSON
	if model["merges"], err = json.Marshal(merges); err != nil {
		t.Fatal(err)
	}
	if file["model"], err = json.Marshal(model); err != nil {
		t.Fatal(err)
	}
	tj, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ParseHFTokenizer(tj, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Model != ModelBPE || v.Pre != "qwen2" || v.AddBOS || v.Size() != 151646 {
		t.Fatalf("model %q pre %q AddBOS %v size %d; want gpt2 qwen2 false 151646", v.Model, v.Pre, v.AddBOS, v.Size())
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	checkHFGolden(t, tok, g)
	for _, c := range g.Cases {
		if got := tok.Decode(c.IDs); got != c.Decoded && utf8.ValidString(got) {
			t.Errorf("Decode(%v) = %q, want %q", c.IDs, got, c.Decoded)
		}
	}
}
