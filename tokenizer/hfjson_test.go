package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// tinyHFJSON is a small ModelHFBPE tokenizer.json: pair-form merges, byte
// fallback for "é", <unk> for the rest.
const tinyHFJSON = `{
 "added_tokens": [
  {"id": 0, "content": "<unk>", "normalized": false, "special": true},
  {"id": 1, "content": "<s>", "normalized": false, "special": true},
  {"id": 2, "content": "</s>", "normalized": false, "special": true},
  {"id": 16, "content": "[X]", "normalized": false, "special": false}],
 "normalizer": {"type": "Sequence", "normalizers": [
  {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
 "pre_tokenizer": null,
 "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]},
 "decoder": {"type": "Sequence", "decoders": [
  {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
  {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
 "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
  "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 3, "a": 4, "b": 5, "c": 6, "▁a": 7, "ab": 8, "▁ab": 9,
   "bc": 10, "<0xC3>": 11, "<0xA9>": 12, "▁abc": 13, "▁b": 14, "▁c": 15},
  "merges": [["a", "b"], ["▁", "a"], ["▁", "ab"], ["▁a", "b"], ["b", "c"], ["▁ab", "c"], ["▁", "b"], ["▁", "c"]]}
}`

// TestHFSynthetic checks the loader's settings and the encoder's rules on
// tinyHFJSON. The expected ids and decode are what the tokenizers library
// (npm 0.23.2) gives for this file (with the fields it insists on, such as
// single_word, filled in with their defaults).
func TestHFSynthetic(t *testing.T) {
	cfg := `{"add_bos_token": true, "bos_token": {"content": "<s>"}, "eos_token": "</s>", "chat_template": "{{ messages }}"}`
	v, err := ParseHFTokenizer([]byte(tinyHFJSON), []byte(cfg), []byte(`{"bos_token_id": 1, "eos_token_id": [2, 0]}`))
	if err != nil {
		t.Fatal(err)
	}
	if v.BOS != 1 || v.EOS != 2 || !v.AddBOS || v.ChatTemplate != "{{ messages }}" || v.Type(16) != TypeUserDefined || v.Type(1) != TypeControl || v.Type(11) != TypeByte {
		t.Fatalf("BOS %d EOS %d AddBOS %v template %q types %v", v.BOS, v.EOS, v.AddBOS, v.ChatTemplate, v.Types)
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want []int32
	}{
		// "▁abc": "a b" (rank 0) first, then "▁ ab" (2), then "▁ab c" (5);
		// "b c" (4) never applies: the token "bc" is not how the rules go.
		{"abc", []int32{13}},
		{"ab c", []int32{9, 15}},
		{"é", []int32{3, 11, 12}},          // byte fallback
		{"xyé", []int32{3, 11, 12, 0}},     // "x", "y" fused into one <unk>, added after the byte tokens
		{"xéyb", []int32{3, 11, 12, 0, 5}}, // ... fused across them, added before the next known character
		{"a[X]b", []int32{7, 16, 14}},      // [X] not normalized: "b" is a new piece, prepended
		{"<s>a", []int32{1, 7}},
	} {
		if got := tok.Encode(c.text, true); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	if got := tok.Encode("<s>", false); slices.Contains(got, 1) {
		t.Errorf("Encode(\"<s>\", false) = %v: control token parsed", got)
	}
	if got := tok.EncodePrompt("abc"); !slices.Equal(got, []int32{1, 13}) {
		t.Errorf("EncodePrompt = %v", got)
	}
	if got := tok.Decode([]int32{13, 15, 3, 11, 12}); got != "abc c é" {
		t.Errorf("Decode = %q", got)
	}
}

// TestHFRefusals checks that what kiln does not implement is an error that
// names the field, not a different tokenization.
func TestHFRefusals(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{`"type": "BPE"`, `"type": "Unigram"`, "model.type"},
		{`"dropout": null`, `"dropout": 0.1`, "model.dropout"},
		{`{"type": "Prepend", "prepend": "▁"}`, `{"type": "NFKC"}`, "normalizer"},
		{`"pre_tokenizer": null`, `"pre_tokenizer": {"type": "Whitespace"}`, "pre_tokenizer"},
		{`{"type": "Fuse"}`, `{"type": "WordPiece"}`, "decoder"},
		{`"normalized": false, "special": false`, `"normalized": false, "lstrip": true, "special": false`, "lstrip"},
		{`["▁", "c"]`, `["▁", "zz"]`, "merge"},
		{`"merges": [`, `"merges": ["a b c", `, "model.merges"},
		{`"unk_token": "<unk>"`, `"unk_token": "<nope>"`, "unk_token"},
		{`"<unk>": 0,`, `"<unk>": 0, "gap": 40,`, "dense"},
		{`"type": "TemplateProcessing"`, `"type": "RobertaProcessing"`, "post_processor"},
	} {
		if !strings.Contains(tinyHFJSON, c.old) {
			t.Fatalf("test bug: %q not in tinyHFJSON", c.old)
		}
		_, err := ParseHFTokenizer([]byte(strings.Replace(tinyHFJSON, c.old, c.new, 1)), nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: err %v, want one naming %q", c.old, c.new, err, c.want)
		}
	}
	if _, err := ParseHFTokenizer([]byte(tinyHFJSON), []byte(`{"bos_token": "<nope>"}`), nil); err == nil {
		t.Error("unknown bos_token accepted")
	}
}

// FuzzParseHFTokenizer feeds arbitrary bytes to the tokenizer.json reader:
// malformed input is an error, never a panic.
func FuzzParseHFTokenizer(f *testing.F) {
	f.Add([]byte(tinyHFJSON), []byte(`{"bos_token": "<s>", "add_bos_token": false}`))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}, "pre_tokenizer": {"type": "ByteLevel"}}`), []byte(nil))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}}`), []byte(`{"chat_template": [{"name": "x"}]}`))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {}}}`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, tj, cfg []byte) {
		v, err := ParseHFTokenizer(tj, cfg, nil)
		if err == nil {
			useVocab(t, v)
		}
	})
}
