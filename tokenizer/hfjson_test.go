package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// hfGolden is a file written by scripts/hf-tokenizer-goldens.js: the ids the
// Hugging Face tokenizers library (npm `tokenizers`) gives for each text.
type hfGolden struct {
	Library       string `json:"library"`
	TokenizerJSON string `json:"tokenizer_json"`
	VocabSource   *struct {
		Format string   `json:"format"` // "vocab.json+merges.txt" or "sentencepiece"
		Files  []string `json:"files"`  // under shared/models
	} `json:"vocab_source"`
	MergesSHA256 string `json:"merges_sha256"` // of the merges, one "left right" per line
	Cases        []struct {
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
		{`"post_processor": {`, `"post_processor": {"type": "Sequence", "processors": [{"type": "BertProcessing"}]}, "x": {`, "processors[0]"},
		{`"pre_tokenizer": null`, `"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}`, "prepend_scheme"},
		{`"pre_tokenizer": null`, `"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": false}`, "add_prefix_space"},
		{`"pre_tokenizer": null`, `"pre_tokenizer": {"type": "Metaspace", "replacement": "▁▁"}`, "replacement"},
		{`"pre_tokenizer": null`, `"pre_tokenizer": {"type": "Metaspace"}`, "replacement"},
		{`{"type": "Prepend", "prepend": "▁"}`, `{"type": "NFD"}`, "normalizer"},
		{`{"type": "ByteFallback"}, `, ``, "ByteFallback"},
		{`{"type": "ByteFallback"}, {"type": "Fuse"}`, `{"type": "Fuse"}, {"type": "ByteFallback"}`, "decoder"},
		{`{"type": "Fuse"},`, `{"type": "Strip", "content": " ", "start": 1, "stop": 0}, {"type": "Fuse"},`, "decoder"},
		{`{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}`,
			`{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "▁"}`, "decoder"},
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

// TestHFByteLevelNFC: a byte-level vocab takes an NFC normalizer (Qwen2),
// which composes text between added tokens before the Split; no other
// normalizer, and no added token matched in normalized text.
func TestHFByteLevelNFC(t *testing.T) {
	const tj = `{"added_tokens": [{"id": 5, "content": "<e>", "normalized": false, "special": true}],
 "normalizer": {"type": "NFC"}, "pre_tokenizer": {"type": "ByteLevel"}, "decoder": {"type": "ByteLevel"},
 "model": {"type": "BPE", "vocab": {"e": 0, "Ã": 1, "©": 2, "Ã©": 3, "Ì": 4}, "merges": ["Ã ©"]}}`
	v, err := ParseHFTokenizer([]byte(tj), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	// "e" + U+0301 composes to "é" (C3 A9: "Ã©" in GPT-2's byte spelling);
	// after "<e>" the mark stays alone (no NFC across an added token).
	for _, c := range []struct {
		text string
		want []int32
	}{{"é", []int32{3}}, {"é", []int32{3}}, {"<e>", []int32{5}}} {
		if got := tok.Encode(c.text, true); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	for _, c := range []struct{ old, new, want string }{
		{`"normalized": false`, `"normalized": true`, "normalized"},
		{`{"type": "NFC"}`, `{"type": "NFKC"}`, "normalizer"},
	} {
		if _, err := ParseHFTokenizer([]byte(strings.Replace(tj, c.old, c.new, 1)), nil, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: err %v, want one naming %q", c.old, c.new, err, c.want)
		}
	}
}

// FuzzParseHFTokenizer feeds arbitrary bytes to the tokenizer.json reader:
// malformed input is an error, never a panic.
func FuzzParseHFTokenizer(f *testing.F) {
	f.Add([]byte(tinyHFJSON), []byte(`{"bos_token": "<s>", "add_bos_token": false}`))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}, "pre_tokenizer": {"type": "ByteLevel"}}`), []byte(nil))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}}`), []byte(`{"chat_template": [{"name": "x"}]}`))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {}}}`), []byte(`[]`))
	f.Add([]byte(`{"normalizer": {"type": "NFC"}, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true},
 "decoder": {"type": "Metaspace", "replacement": "▁"}, "model": {"type": "BPE", "vocab": {"▁": 0, "a": 1, "▁a": 2}, "merges": [["▁", "a"]]}}`), []byte(`{"clean_up_tokenization_spaces": true}`))
	f.Add([]byte(`{"normalizer": {"type": "NFC"}, "pre_tokenizer": {"type": "ByteLevel"}, "post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"}]},
 "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}`), []byte(nil))
	f.Fuzz(func(t *testing.T, tj, cfg []byte) {
		v, err := ParseHFTokenizer(tj, cfg, nil)
		if err == nil {
			useVocab(t, v)
		}
	})
}

// TestHFMetaspaceSynthetic runs tinyHFJSON's vocab under the Metaspace
// pre-tokenizer and decoder, the older Metaspace spelling, and an NFC
// normalizer. The expected ids and decodes are the tokenizers library's
// (npm 0.23.2) on the same files.
func TestHFMetaspaceSynthetic(t *testing.T) {
	const legacyNorm = `{"type": "Sequence", "normalizers": [
  {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}`
	const stripDecoder = `{"type": "Sequence", "decoders": [
  {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
  {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}`
	texts := []string{"abc", " abc", "ab  c", "a[X]b", "<s>ab", "<s> ab", "ab<s>c", "e\u0301", "\u00e9", "c\u0327", "▁ab", ""}
	for _, c := range []struct {
		name                string
		normalizer, pre     string
		decoder             string
		noByteFallback      bool
		want                [][]int32
		decodeA, decodeB    string // of [14 3 7 13] and [3 3 4]
		decodedFirstOfTexts string // decode of the ids of texts[0]
	}{
		{"first", "null", `{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}`, stripDecoder, false,
			[][]int32{{13}, {13}, {9, 3, 15}, {7, 16, 5}, {1, 8}, {1, 9}, {9, 1, 6}, {3, 0}, {3, 11, 12}, {15, 0}, {9}, {}},
			"b  a abc", " a", "abc"},
		{"always-split", "null", `{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}`,
			`{"type": "Sequence", "decoders": [{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}, {"type": "ByteFallback"}, {"type": "Fuse"}]}`, false,
			[][]int32{{13}, {13}, {9, 3, 15}, {7, 16, 14}, {1, 9}, {1, 9}, {9, 1, 15}, {3, 0}, {3, 11, 12}, {15, 0}, {9}, {}},
			"b  a abc", " a", "abc"},
		{"old-spelling", "null", `{"type": "Metaspace", "replacement": "▁", "add_prefix_space": true, "str_rep": "▁"}`,
			`{"type": "Metaspace", "replacement": "▁", "add_prefix_space": false, "prepend_scheme": "never"}`, true,
			[][]int32{{13}, {13}, {9, 3, 15}, {7, 16, 14}, {1, 9}, {1, 9}, {9, 1, 15}, {3, 0}, {3, 0}, {15, 0}, {9}, {}},
			" b  a abc", "  a", " abc"},
		{"nfc", `{"type": "Sequence", "normalizers": [{"type": "NFC"}, ` + legacyNorm[strings.Index(legacyNorm, "[")+1:], "null", stripDecoder, false,
			[][]int32{{13}, {3, 13}, {9, 3, 15}, {7, 16, 14}, {1, 9}, {1, 3, 9}, {9, 1, 15}, {3, 11, 12}, {3, 11, 12}, {3, 0}, {3, 9}, {}},
			"b  a abc", " a", "abc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tj := tinyHFJSON
			for _, r := range [][2]string{
				{`"normalizer": ` + legacyNorm, `"normalizer": ` + c.normalizer},
				{`"pre_tokenizer": null`, `"pre_tokenizer": ` + c.pre},
				{`"decoder": ` + stripDecoder, `"decoder": ` + c.decoder},
			} {
				if !strings.Contains(tj, r[0]) {
					t.Fatalf("test bug: %q not in tinyHFJSON", r[0])
				}
				tj = strings.Replace(tj, r[0], r[1], 1)
			}
			if c.noByteFallback {
				tj = strings.Replace(tj, `"byte_fallback": true`, `"byte_fallback": false`, 1)
			}
			v, err := ParseHFTokenizer([]byte(tj), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := New(v)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range texts {
				if got := tok.Encode(text, true); !slices.Equal(got, c.want[i]) && len(got)+len(c.want[i]) > 0 {
					t.Errorf("Encode(%q) = %v, want %v", text, got, c.want[i])
				}
			}
			for _, d := range []struct {
				ids  []int32
				want string
			}{{[]int32{14, 3, 7, 13}, c.decodeA}, {[]int32{3, 3, 4}, c.decodeB}, {c.want[0], c.decodedFirstOfTexts}} {
				if got := tok.Decode(d.ids); got != d.want {
					t.Errorf("Decode(%v) = %q, want %q", d.ids, got, d.want)
				}
			}
		})
	}
}
