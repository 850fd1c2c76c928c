package tokenizer

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
)

// hfRoundTrip writes v as tokenizer.json + tokenizer_config.json (HFFiles)
// and reads them back (ParseHFTokenizer).
func hfRoundTrip(t *testing.T, v *Vocab) (*Vocab, *Tokenizer) {
	t.Helper()
	tj, tc, err := v.HFFiles()
	if err != nil {
		t.Fatal(err)
	}
	hv, err := ParseHFTokenizer(tj, tc, nil)
	if err != nil {
		t.Fatalf("reading HFFiles' output back: %v", err)
	}
	tok, err := New(hv)
	if err != nil {
		t.Fatal(err)
	}
	if hv.Size() != v.Size() || hv.BOS != v.BOS || hv.EOS != v.EOS || hv.AddBOS != v.AddBOS || hv.AddEOS != v.AddEOS || hv.ChatTemplate != v.ChatTemplate {
		t.Errorf("read back: size %d BOS %d EOS %d add %v/%v template %q; wrote %d %d %d %v/%v %q",
			hv.Size(), hv.BOS, hv.EOS, hv.AddBOS, hv.AddEOS, hv.ChatTemplate, v.Size(), v.BOS, v.EOS, v.AddBOS, v.AddEOS, v.ChatTemplate)
	}
	for id := range v.Tokens {
		if hv.Tokens[id] != v.Tokens[id] {
			t.Fatalf("token %d: %q read back as %q", id, v.Tokens[id], hv.Tokens[id])
		}
	}
	return hv, tok
}

// TestHFFilesRoundTrip: GGUF vocabularies written as a Hugging Face
// tokenizer and read back tokenize llama.cpp's test vectors as llama.cpp
// does: byte-level ones (GPT-2, Llama 3, Qwen2) because they are the same
// model, SentencePiece (Llama 2) because the merges made from its scores
// order the merges as its scores do. Decoding is unchanged too.
func TestHFFilesRoundTrip(t *testing.T) {
	shared := testutil.SharedModels(t)
	gpt2Files := func(vocab, merges, family string) func(t *testing.T) *Vocab {
		return func(t *testing.T) *Vocab {
			v, err := LoadGPT2(filepath.Join(shared, "tokenizers", vocab), filepath.Join(shared, "tokenizers", merges))
			if err != nil {
				t.Fatal(err)
			}
			if err := v.AddSpecials(family); err != nil {
				t.Fatal(err)
			}
			v.Pre = family
			if family == FamilyLlama3 {
				v.Pre = "llama-bpe"
			}
			return v
		}
	}
	fromGGUF := func(name string) func(t *testing.T) *Vocab {
		return func(t *testing.T) *Vocab {
			f, err := gguf.Open(filepath.Join(shared, "llamacpp-vocab", name+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			v, err := VocabFromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	for _, c := range []struct {
		name    string
		vectors string
		vocab   func(t *testing.T) *Vocab
		model   string
	}{
		{"llama-spm", "ggml-vocab-llama-spm", fromGGUF("ggml-vocab-llama-spm"), ModelHFBPE},
		{"gpt-2", "ggml-vocab-gpt-2", fromGGUF("ggml-vocab-gpt-2"), ModelBPE},
		{"llama3", "ggml-vocab-llama-bpe", gpt2Files("llama3.2-encoder.json", "llama3.2-vocab.bpe", FamilyLlama3), ModelBPE},
		{"qwen2", "ggml-vocab-qwen2", gpt2Files("qwen2-vocab.json", "qwen2-merges.txt", FamilyQwen2), ModelBPE},
	} {
		t.Run(c.name, func(t *testing.T) {
			vs := readVectors(t, c.vectors)
			v := c.vocab(t)
			want, err := New(v)
			if err != nil {
				t.Fatal(err)
			}
			hv, tok := hfRoundTrip(t, v)
			if hv.Model != c.model {
				t.Errorf("read back as %q, want %q", hv.Model, c.model)
			}
			checkVectors(t, tok, vs)
			// A control token in the text; not "</s>", which llama.cpp makes
			// control by its text wherever it is (Qwen2 has it as a regular
			// token), the tokenizers library only when it is an added token.
			eos := v.Tokens[v.EOS]
			for _, x := range vs {
				ids := want.Encode(x.text, false)
				if a, b := tok.Decode(ids), want.Decode(ids); a != b {
					t.Errorf("Decode(%v) = %q, GGUF vocab %q", ids, a, b)
				}
				if a, b := tok.EncodePrompt(x.text+eos+"x"), want.EncodePrompt(x.text+eos+"x"); !slices.Equal(a, b) {
					t.Errorf("EncodePrompt(%q) = %v, GGUF vocab %v", x.text+eos+"x", a, b)
				}
			}
		})
	}
}

// TestHFFilesSmall checks HFFiles' fields on small vocabs, with no shared
// data: an SPM vocab with byte tokens and a chat template, a byte-level one
// with added tokens, and the refusals.
func TestHFFilesSmall(t *testing.T) {
	spm := NewVocab(ModelSPM)
	spm.Tokens = []string{"<unk>", "<s>", "</s>", "<0xC3>", "<0xA9>", "▁", "a", "b", "ab", "▁a", "▁ab"}
	spm.Scores = []float32{0, 0, 0, 0, 0, -1, -2, -3, -4, -5, -6}
	spm.Types = []TokenType{TypeUnknown, TypeControl, TypeControl, TypeByte, TypeByte, 1, 1, 1, 1, 1, 1}
	spm.BOS, spm.EOS, spm.UNK = 1, 2, 0
	spm.ChatTemplate = "{{ messages }}"
	tj, tc, err := spm.HFFiles()
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Model struct {
			Merges       [][2]string `json:"merges"`
			ByteFallback bool        `json:"byte_fallback"`
			UnkToken     string      `json:"unk_token"`
		} `json:"model"`
	}
	if err := json.Unmarshal(tj, &f); err != nil {
		t.Fatal(err)
	}
	// By the score of what they make: "ab" (-4), "▁a" (-5), "▁ab" (-6: two splits, by left length).
	wantMerges := [][2]string{{"a", "b"}, {"▁", "a"}, {"▁a", "b"}, {"▁", "ab"}}
	if !slices.Equal(f.Model.Merges, wantMerges) || !f.Model.ByteFallback || f.Model.UnkToken != "<unk>" {
		t.Errorf("model: merges %v byte_fallback %v unk %q; want %v true <unk>", f.Model.Merges, f.Model.ByteFallback, f.Model.UnkToken, wantMerges)
	}
	if !strings.Contains(string(tc), `"chat_template":"{{ messages }}"`) || !strings.Contains(string(tc), `"bos_token":"\u003cs\u003e"`) {
		t.Errorf("tokenizer_config.json: %s", tc)
	}
	hv, tok := hfRoundTrip(t, spm)
	ref, _ := New(spm)
	for _, text := range []string{"ab a", "é ab", " aab", "<s>ab"} {
		if a, b := tok.EncodePrompt(text), ref.EncodePrompt(text); !slices.Equal(a, b) {
			t.Errorf("EncodePrompt(%q) = %v, SPM %v", text, a, b)
		}
	}
	if hv.Type(1) != TypeControl || hv.Type(3) != TypeByte || hv.UNK != 0 {
		t.Errorf("types %v UNK %d", hv.Types, hv.UNK)
	}

	bpe := NewVocab(ModelBPE)
	bpe.Pre = "qwen2"
	bpe.Tokens = []string{"a", "b", "ab", "Ġ", "Ġab", "<|x|>", "<t>"}
	bpe.Types = []TokenType{1, 1, 1, 1, 1, TypeControl, TypeUserDefined}
	bpe.Merges = []string{"a b", "Ġ ab"}
	bpe.EOS = 5
	_, btok := hfRoundTrip(t, bpe)
	if got := btok.Encode("ab ab<t><|x|>", true); !slices.Equal(got, []int32{2, 4, 6, 5}) {
		t.Errorf("byte-level round trip: %v", got)
	}

	for name, v := range map[string]*Vocab{
		"pre": func() *Vocab { c := bpe.Clone(); c.Pre = "deepseek-llm"; return c }(),
		"hf":  func() *Vocab { c := spm.Clone(); c.Model = ModelHFBPE; c.HF = &HFSettings{}; return c }(),
	} {
		if _, _, err := v.HFFiles(); err == nil {
			t.Errorf("%s: HFFiles accepted it", name)
		}
	}
}
