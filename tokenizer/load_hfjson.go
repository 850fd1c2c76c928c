package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LoadHFTokenizer reads a Hugging Face tokenizers folder: tokenizer.json
// (required), tokenizer_config.json and generation_config.json (optional:
// BOS/EOS, add_bos_token/add_eos_token, chat_template).
func LoadHFTokenizer(dir string) (*Vocab, error) {
	tj, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	optional := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		return b, nil
	}
	tc, err := optional("tokenizer_config.json")
	if err != nil {
		return nil, err
	}
	gc, err := optional("generation_config.json")
	if err != nil {
		return nil, err
	}
	return ParseHFTokenizer(tj, tc, gc)
}

// ParseHFTokenizer is LoadHFTokenizer on the files' contents; tokenizerConfig
// and generationConfig may be nil.
//
// tokenizer.json maps onto a Vocab as follows. A BPE model whose
// pre-tokenizer is byte-level (ByteLevel, alone or after a Split whose regex
// is one llama.cpp's pre-tokenizers implement) becomes a "gpt2" vocab with
// that Pre, and takes an NFC normalizer (Qwen2). Any other BPE model
// (normalizers Prepend, Replace and NFC, pre-tokenizer none or Metaspace:
// Llama 2 / Mistral / TinyStories style, byte fallback to <0xNN>, <unk> for
// the rest) becomes ModelHFBPE, which encodes as the tokenizers library
// does (merge rank order over characters, not SentencePiece scores).
// Decoders: ByteLevel; Replace("▁"), Metaspace, ByteFallback, Fuse, Strip.
// Added tokens become control tokens (special: true) or user-defined tokens
// (special: false); they alone are split out of text (HF is set on every
// vocab read here). Every field kiln does not implement is an error that
// names it: a tokenizer.json is never silently tokenized differently.
func ParseHFTokenizer(tokenizerJSON, tokenizerConfig, generationConfig []byte) (*Vocab, error) {
	var f hfFile
	if err := json.Unmarshal(tokenizerJSON, &f); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %w", err)
	}
	m := f.Model
	if m.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: model.type %q not supported (want BPE)", m.Type)
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: model.dropout %v not supported", *m.Dropout)
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: model.continuing_subword_prefix %q not supported", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: model.end_of_word_suffix %q not supported", *m.EndOfWordSuffix)
	}

	// Token table: model.vocab plus added_tokens, ids dense from 0.
	texts := map[int32]string{}
	maxID := int32(-1)
	put := func(text string, id int32, what string) error {
		if id < 0 || id >= maxVocab {
			return fmt.Errorf("tokenizer: tokenizer.json: %s %q has id %d out of range", what, text, id)
		}
		if old, ok := texts[id]; ok && old != text {
			return fmt.Errorf("tokenizer: tokenizer.json: %s %q has id %d, already %q", what, text, id, old)
		}
		texts[id] = text
		maxID = max(maxID, id)
		return nil
	}
	for text, id := range m.Vocab {
		if err := put(text, id, "model.vocab token"); err != nil {
			return nil, err
		}
	}
	for _, a := range f.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip {
			return nil, fmt.Errorf("tokenizer: tokenizer.json: added_tokens %q: single_word/lstrip/rstrip not supported", a.Content)
		}
		if a.Content == "" {
			return nil, fmt.Errorf("tokenizer: tokenizer.json: added_tokens id %d has empty content", a.ID)
		}
		if err := put(a.Content, a.ID, "added_tokens entry"); err != nil {
			return nil, err
		}
	}
	n := int(maxID) + 1
	if n == 0 {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: model.vocab is empty")
	}
	if len(texts) != n {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: token ids are not dense (%d tokens, highest id %d)", len(texts), maxID)
	}
	merges, err := parseHFMerges(m.Merges)
	if err != nil {
		return nil, err
	}

	byteLevel, pre, ms, err := hfPreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	steps, err := hfNormalizer(f.Normalizer)
	if err != nil {
		return nil, err
	}
	var v *Vocab
	if byteLevel {
		if m.ByteFallback {
			return nil, fmt.Errorf("tokenizer: tokenizer.json: model.byte_fallback with a ByteLevel pre_tokenizer not supported")
		}
		for _, st := range steps {
			if !st.NFC {
				return nil, fmt.Errorf("tokenizer: tokenizer.json: normalizer %s with a ByteLevel pre_tokenizer not supported (only NFC)", clip(f.Normalizer))
			}
		}
		if _, err := hfDecoder(f.Decoder, true, false); err != nil {
			return nil, err
		}
		v = NewVocab(ModelBPE)
		v.Pre = pre
		v.AddBOS = false
		v.HF = &HFSettings{Normalizer: steps}
	} else {
		v = NewVocab(ModelHFBPE)
		v.AddBOS = false
		h := &HFSettings{ByteFallback: m.ByteFallback, FuseUnk: m.FuseUnk, Normalizer: steps, Metaspace: ms}
		dec, err := hfDecoder(f.Decoder, false, m.ByteFallback)
		if err != nil {
			return nil, err
		}
		v.AddSpacePrefix = dec.stripSpace
		h.DecodeFirstMarks = dec.firstMarks
		v.HF = h
	}
	v.Tokens = make([]string, n)
	v.Types = make([]TokenType, n)
	for id, text := range texts {
		v.Tokens[id] = text
		v.Types[id] = TypeNormal
		if v.Model == ModelHFBPE && m.ByteFallback {
			if _, ok := byteTokenValue(text); ok && len(text) == 6 && text[5] == '>' {
				v.Types[id] = TypeByte
			}
		}
	}
	for _, a := range f.AddedTokens {
		v.Types[a.ID] = TypeUserDefined
		if a.Special {
			v.Types[a.ID] = TypeControl
		}
		if v.Model == ModelHFBPE && a.Normalized {
			v.HF.NormalizedAdded = append(v.HF.NormalizedAdded, a.ID)
		}
		if v.Model == ModelBPE && hasNFC(v.HF.Normalizer) && a.Normalized {
			// The library would match it in NFC text, kiln's byte-level
			// tokenizer only in the raw text (they differ where NFC joins
			// the token's last character with a combining mark after it).
			return nil, fmt.Errorf("tokenizer: tokenizer.json: added_tokens %q: normalized: true with the NFC normalizer of a ByteLevel vocab not supported", a.Content)
		}
	}
	if v.Model == ModelHFBPE {
		sort.Slice(v.HF.NormalizedAdded, func(i, j int) bool { return v.HF.NormalizedAdded[i] < v.HF.NormalizedAdded[j] })
	}
	if m.UnkToken != nil {
		id := int32(-1)
		for i, t := range v.Tokens {
			if t == *m.UnkToken {
				id = int32(i)
			}
		}
		if id < 0 {
			return nil, fmt.Errorf("tokenizer: tokenizer.json: model.unk_token %q is not in the vocab", *m.UnkToken)
		}
		v.UNK = id
		if v.Types[id] == TypeNormal {
			v.Types[id] = TypeUnknown
		}
	}
	if v.Model == ModelBPE {
		// llama.cpp ties ignore_merges to the pre-tokenizer (Llama 3 has it).
		if p, err := lookupPre(pre); err != nil || p.ignoreMerges != m.IgnoreMerges {
			return nil, fmt.Errorf("tokenizer: tokenizer.json: model.ignore_merges %v with pre_tokenizer %q not supported", m.IgnoreMerges, pre)
		}
	} else {
		v.HF.IgnoreMerges = m.IgnoreMerges
	}
	v.Merges = merges
	if err := hfPostProcessor(f.PostProcessor, v); err != nil {
		return nil, err
	}
	if err := hfConfigs(v, tokenizerConfig, generationConfig); err != nil {
		return nil, err
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	if _, err := New(v); err != nil { // merges naming unknown tokens and the like
		return nil, err
	}
	return v, nil
}

// hfFile is the part of tokenizer.json kiln reads.
type hfFile struct {
	AddedTokens   []hfAddedToken  `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         struct {
		Type                    string           `json:"type"`
		Dropout                 *float64         `json:"dropout"`
		UnkToken                *string          `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
		FuseUnk                 bool             `json:"fuse_unk"`
		ByteFallback            bool             `json:"byte_fallback"`
		IgnoreMerges            bool             `json:"ignore_merges"`
		Vocab                   map[string]int32 `json:"vocab"`
		Merges                  json.RawMessage  `json:"merges"`
	} `json:"model"`
}

type hfAddedToken struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// hfComponent is one normalizer, pre-tokenizer, processor or decoder.
type hfComponent struct {
	Type string `json:"type"`
	// Sequence members, under the key each kind uses.
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	Decoders      []json.RawMessage `json:"decoders"`
	Processors    []json.RawMessage `json:"processors"`
	// Prepend, Replace, Strip, Split, ByteLevel, Metaspace, TemplateProcessing.
	Prepend        *string         `json:"prepend"`
	Pattern        *hfPattern      `json:"pattern"`
	Content        *string         `json:"content"`
	Start          int             `json:"start"`
	Stop           int             `json:"stop"`
	Behavior       string          `json:"behavior"`
	Invert         bool            `json:"invert"`
	AddPrefixSpace *bool           `json:"add_prefix_space"`
	UseRegex       *bool           `json:"use_regex"`
	Replacement    *string         `json:"replacement"`
	PrependScheme  *string         `json:"prepend_scheme"`
	Split          *bool           `json:"split"`
	Single         json.RawMessage `json:"single"`
}

type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

func isNull(b json.RawMessage) bool {
	return len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null"
}

func parseComponent(b json.RawMessage, field string) (*hfComponent, error) {
	if isNull(b) {
		return nil, nil
	}
	var c hfComponent
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %s: %w", field, err)
	}
	return &c, nil
}

// parseHFMerges reads model.merges in either form: ["a b", ...] or
// [["a", "b"], ...]. Rules become "a b" strings (Vocab.Merges); a left side
// holding a space would be ambiguous there, so it is refused.
func parseHFMerges(b json.RawMessage) ([]string, error) {
	if isNull(b) {
		return nil, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: model.merges: %w", err)
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			if strings.Count(s, " ") != 1 {
				return nil, fmt.Errorf("tokenizer: tokenizer.json: model.merges[%d] %q is not two tokens separated by one space", i, s)
			}
			out[i] = s
			continue
		}
		var p []string
		if err := json.Unmarshal(r, &p); err != nil || len(p) != 2 {
			return nil, fmt.Errorf("tokenizer: tokenizer.json: model.merges[%d] is neither \"a b\" nor [\"a\", \"b\"]", i)
		}
		if strings.Contains(p[0], " ") {
			return nil, fmt.Errorf("tokenizer: tokenizer.json: model.merges[%d]: left side %q holds a space, not supported", i, p[0])
		}
		out[i] = p[0] + " " + p[1]
	}
	return out, nil
}

// hfSplitRegexes maps the Split regexes of byte-level tokenizer.json files
// to the llama.cpp pre-tokenizer that implements the same expression.
var hfSplitRegexes = map[string]string{
	// GPT-2 (ByteLevel with use_regex: true spells this one itself).
	`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`: "gpt-2",
	// Llama 3.
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: "llama3",
	// Qwen2.
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: "qwen2",
}

// hfPreTokenizer reads pre_tokenizer: null (the whole normalized text is one
// word), Metaspace, ByteLevel (GPT-2 regex), or Sequence [Split(known regex,
// Isolated), ByteLevel(use_regex: false)].
func hfPreTokenizer(b json.RawMessage) (byteLevel bool, pre string, ms *Metaspace, err error) {
	c, err := parseComponent(b, "pre_tokenizer")
	if err != nil || c == nil {
		return false, "", nil, err
	}
	if c.Type == "Metaspace" {
		ms, err := hfMetaspace(c, b, "pre_tokenizer")
		return false, "", ms, err
	}
	byteLevel, pre, err = hfByteLevel(c, b)
	return byteLevel, pre, nil, err
}

// hfMetaspace reads a Metaspace pre-tokenizer or decoder, with the
// library's defaults (prepend_scheme always, split true); the older
// add_prefix_space is checked as the library does (false needs prepend_scheme
// never) and str_rep ignored.
func hfMetaspace(c *hfComponent, raw json.RawMessage, field string) (*Metaspace, error) {
	if c.Replacement == nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %s Metaspace without replacement: %s", field, clip(raw))
	}
	ms := &Metaspace{Replacement: *c.Replacement, Prepend: PrependAlways, Split: true}
	if c.PrependScheme != nil {
		ms.Prepend = *c.PrependScheme
	}
	if c.AddPrefixSpace != nil && !*c.AddPrefixSpace && ms.Prepend != PrependNever {
		// As the library: the default scheme (always) contradicts it too.
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %s Metaspace add_prefix_space false contradicts prepend_scheme %q", field, ms.Prepend)
	}
	if c.Split != nil {
		ms.Split = *c.Split
	}
	if err := ms.validate(); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %s: %w", field, err)
	}
	return ms, nil
}

// hfByteLevel reads a byte-level pre_tokenizer: ByteLevel (GPT-2 regex), or
// Sequence [Split(known regex, Isolated), ByteLevel(use_regex: false)].
func hfByteLevel(c *hfComponent, b json.RawMessage) (byteLevel bool, pre string, err error) {
	bad := func(what string) error {
		return fmt.Errorf("tokenizer: tokenizer.json: pre_tokenizer %s not supported: %s", what, clip(b))
	}
	checkByteLevel := func(c *hfComponent, wantRegex bool) error {
		if c.Type != "ByteLevel" {
			return bad(fmt.Sprintf("%q", c.Type))
		}
		if c.AddPrefixSpace != nil && *c.AddPrefixSpace {
			return bad("ByteLevel.add_prefix_space")
		}
		if useRegex := c.UseRegex == nil || *c.UseRegex; useRegex != wantRegex {
			return bad("ByteLevel.use_regex")
		}
		return nil
	}
	switch c.Type {
	case "ByteLevel":
		return true, "gpt-2", checkByteLevel(c, true)
	case "Sequence":
		if len(c.PreTokenizers) != 2 {
			return false, "", bad("Sequence (want [Split, ByteLevel])")
		}
		s, err := parseComponent(c.PreTokenizers[0], "pre_tokenizer.pretokenizers[0]")
		if err != nil {
			return false, "", err
		}
		bl, err := parseComponent(c.PreTokenizers[1], "pre_tokenizer.pretokenizers[1]")
		if err != nil {
			return false, "", err
		}
		if s == nil || bl == nil || s.Type != "Split" {
			return false, "", bad("Sequence (want [Split, ByteLevel])")
		}
		if s.Pattern == nil || s.Pattern.Regex == nil || s.Behavior != "Isolated" || s.Invert {
			return false, "", bad("Split (want a Regex pattern, behavior Isolated, invert false)")
		}
		name, ok := hfSplitRegexes[*s.Pattern.Regex]
		if !ok {
			return false, "", bad(fmt.Sprintf("Split regex %q", *s.Pattern.Regex))
		}
		return true, name, checkByteLevel(bl, false)
	}
	return false, "", bad(fmt.Sprintf("%q", c.Type))
}

// hfNormalizer reads normalizer: null, NFC, Prepend, Replace with a String
// pattern, or a Sequence of those.
func hfNormalizer(b json.RawMessage) ([]NormStep, error) {
	c, err := parseComponent(b, "normalizer")
	if err != nil || c == nil {
		return nil, err
	}
	var out []NormStep
	var walk func(c *hfComponent, raw json.RawMessage, depth int) error
	walk = func(c *hfComponent, raw json.RawMessage, depth int) error {
		switch {
		case c == nil:
			return nil
		case c.Type == "Sequence" && depth < 4:
			for i, r := range c.Normalizers {
				sub, err := parseComponent(r, fmt.Sprintf("normalizer.normalizers[%d]", i))
				if err != nil {
					return err
				}
				if err := walk(sub, r, depth+1); err != nil {
					return err
				}
			}
			return nil
		case c.Type == "NFC":
			out = append(out, NormStep{NFC: true})
			return nil
		case c.Type == "Prepend" && c.Prepend != nil:
			out = append(out, NormStep{Prepend: *c.Prepend})
			return nil
		case c.Type == "Replace" && c.Pattern != nil && c.Pattern.String != nil && c.Pattern.Regex == nil && c.Content != nil && *c.Pattern.String != "":
			out = append(out, NormStep{Old: *c.Pattern.String, New: *c.Content})
			return nil
		}
		return fmt.Errorf("tokenizer: tokenizer.json: normalizer %s not supported", clip(raw))
	}
	return out, walk(c, b, 0)
}

// hfDecoderRules is what a decoder asks of Decode beyond pieces.
type hfDecoderRules struct {
	stripSpace bool // Strip(" ", start 1) after Fuse: the text loses one leading space
	firstMarks bool // Metaspace (prepend_scheme not never): the first token loses every "▁"
}

// hfDecoder accepts the decoders whose output Decode reproduces:
// ByteLevel (or none) for byte-level vocabs; for the others Metaspace("▁")
// alone, or a Sequence of Replace("▁" → " ") or a leading Metaspace("▁"),
// ByteFallback (before any Fuse; required with model.byte_fallback), Fuse,
// and Strip(" ", start ≤ 1, stop 0) after Fuse. The order matters because
// these decoders work token by token until Fuse joins the tokens.
func hfDecoder(b json.RawMessage, byteLevel, byteFallback bool) (r hfDecoderRules, err error) {
	c, err := parseComponent(b, "decoder")
	if err != nil {
		return r, err
	}
	bad := fmt.Errorf("tokenizer: tokenizer.json: decoder %s not supported", clip(b))
	if c == nil {
		if byteLevel {
			return r, nil // Decode spells bytes back either way
		}
		return r, bad
	}
	if byteLevel {
		if c.Type != "ByteLevel" {
			return r, bad
		}
		return r, nil
	}
	members := []json.RawMessage{b}
	if c.Type == "Sequence" {
		members = c.Decoders
	}
	spaces, bytes, fused := false, false, false
	for i, raw := range members {
		d, err := parseComponent(raw, fmt.Sprintf("decoder.decoders[%d]", i))
		if err != nil {
			return r, err
		}
		switch {
		case d == nil:
			return r, bad
		case d.Type == "Replace" && d.Pattern != nil && d.Pattern.String != nil && *d.Pattern.String == spaceMark && d.Content != nil && *d.Content == " ":
			spaces = true
		case d.Type == "Metaspace" && i == 0:
			ms, err := hfMetaspace(d, raw, "decoder")
			if err != nil {
				return r, err
			}
			if ms.Replacement != spaceMark {
				return r, bad // Piece turns only "▁" into " "
			}
			spaces = true
			r.firstMarks = ms.Prepend != PrependNever
		case d.Type == "ByteFallback" && !fused:
			bytes = true
		case d.Type == "Fuse":
			fused = true
		case d.Type == "Strip" && d.Content != nil && *d.Content == " " && d.Stop == 0 && (d.Start == 0 || d.Start == 1 && fused):
			r.stripSpace = r.stripSpace || d.Start == 1
		default:
			return r, bad
		}
	}
	if !spaces || r.stripSpace && r.firstMarks {
		return r, bad // Piece turns "▁" into " " for these vocabs
	}
	if byteFallback && !bytes {
		return r, fmt.Errorf("tokenizer: tokenizer.json: decoder %s without ByteFallback (before Fuse) for a model with byte_fallback not supported", clip(b))
	}
	return r, nil
}

// hfPostProcessor reads which special tokens encoding with special tokens
// adds: TemplateProcessing's single template (tokens before $A are BOS,
// after it EOS), ByteLevel (none), null, or a Sequence of those with at
// most one TemplateProcessing (Llama 3).
func hfPostProcessor(b json.RawMessage, v *Vocab) error {
	c, err := parseComponent(b, "post_processor")
	if err != nil || c == nil {
		return err
	}
	switch c.Type {
	case "ByteLevel":
		return nil
	case "TemplateProcessing":
		return hfTemplate(c, v)
	case "Sequence":
		templates := 0
		for i, r := range c.Processors {
			p, err := parseComponent(r, fmt.Sprintf("post_processor.processors[%d]", i))
			if err != nil {
				return err
			}
			switch {
			case p != nil && p.Type == "ByteLevel":
			case p != nil && p.Type == "TemplateProcessing" && templates == 0:
				templates++
				if err := hfTemplate(p, v); err != nil {
					return err
				}
			default:
				return fmt.Errorf("tokenizer: tokenizer.json: post_processor.processors[%d] %s not supported", i, clip(r))
			}
		}
		return nil
	}
	return fmt.Errorf("tokenizer: tokenizer.json: post_processor %q not supported", c.Type)
}

// hfTemplate reads a TemplateProcessing post-processor.
func hfTemplate(c *hfComponent, v *Vocab) (err error) {
	var single []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	}
	if err := json.Unmarshal(c.Single, &single); err != nil {
		return fmt.Errorf("tokenizer: tokenizer.json: post_processor.single: %w", err)
	}
	seen := false
	var before, after []string
	for _, p := range single {
		switch {
		case p.Sequence != nil && p.Sequence.ID == "A" && !seen:
			seen = true
		case p.SpecialToken != nil && !seen:
			before = append(before, p.SpecialToken.ID)
		case p.SpecialToken != nil:
			after = append(after, p.SpecialToken.ID)
		default:
			return fmt.Errorf("tokenizer: tokenizer.json: post_processor.single %s not supported", clip(c.Single))
		}
	}
	if len(before) > 1 || len(after) > 1 || !seen {
		return fmt.Errorf("tokenizer: tokenizer.json: post_processor.single %s not supported (want at most one token each side of $A)", clip(c.Single))
	}
	find := func(text string) (int32, error) {
		for i, t := range v.Tokens {
			if t == text {
				return int32(i), nil
			}
		}
		return -1, fmt.Errorf("tokenizer: tokenizer.json: post_processor token %q is not in the vocab", text)
	}
	if len(before) == 1 {
		if v.BOS, err = find(before[0]); err != nil {
			return err
		}
		v.AddBOS = true
	}
	if len(after) == 1 {
		if v.EOS, err = find(after[0]); err != nil {
			return err
		}
		v.AddEOS = true
	}
	return nil
}

// hfConfigs applies tokenizer_config.json (bos_token, eos_token, unk_token,
// pad_token, add_bos_token, add_eos_token, clean_up_tokenization_spaces,
// chat_template) and
// generation_config.json (bos_token_id, eos_token_id: the ids a model ends
// generation with; the first of a list becomes EOS).
func hfConfigs(v *Vocab, tokenizerConfig, generationConfig []byte) error {
	ids := map[string]int32{}
	for i, t := range v.Tokens {
		ids[t] = int32(i)
	}
	if len(bytes.TrimSpace(generationConfig)) > 0 {
		var g struct {
			BOS json.RawMessage `json:"bos_token_id"`
			EOS json.RawMessage `json:"eos_token_id"`
		}
		if err := json.Unmarshal(generationConfig, &g); err != nil {
			return fmt.Errorf("tokenizer: generation_config.json: %w", err)
		}
		for _, f := range []struct {
			raw json.RawMessage
			dst *int32
			key string
		}{{g.BOS, &v.BOS, "bos_token_id"}, {g.EOS, &v.EOS, "eos_token_id"}} {
			if isNull(f.raw) {
				continue
			}
			var one int32
			var list []int32
			if err := json.Unmarshal(f.raw, &one); err != nil {
				if err := json.Unmarshal(f.raw, &list); err != nil || len(list) == 0 {
					return fmt.Errorf("tokenizer: generation_config.json: %s %s is neither an id nor a list of ids", f.key, clip(f.raw))
				}
				one = list[0]
			}
			if one < 0 || int(one) >= len(v.Tokens) {
				return fmt.Errorf("tokenizer: generation_config.json: %s %d out of range", f.key, one)
			}
			*f.dst = one
		}
	}
	if len(bytes.TrimSpace(tokenizerConfig)) == 0 {
		return nil
	}
	var c struct {
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
		UNK          json.RawMessage `json:"unk_token"`
		PAD          json.RawMessage `json:"pad_token"`
		AddBOS       *bool           `json:"add_bos_token"`
		AddEOS       *bool           `json:"add_eos_token"`
		CleanSpaces  *bool           `json:"clean_up_tokenization_spaces"`
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(tokenizerConfig, &c); err != nil {
		return fmt.Errorf("tokenizer: tokenizer_config.json: %w", err)
	}
	for _, f := range []struct {
		raw json.RawMessage
		dst *int32
		key string
	}{{c.BOS, &v.BOS, "bos_token"}, {c.EOS, &v.EOS, "eos_token"}, {c.UNK, &v.UNK, "unk_token"}, {c.PAD, &v.PAD, "pad_token"}} {
		if isNull(f.raw) {
			continue
		}
		var text string
		if err := json.Unmarshal(f.raw, &text); err != nil {
			var obj struct {
				Content string `json:"content"`
			}
			if err := json.Unmarshal(f.raw, &obj); err != nil {
				return fmt.Errorf("tokenizer: tokenizer_config.json: %s %s is neither a string nor {\"content\": ...}", f.key, clip(f.raw))
			}
			text = obj.Content
		}
		id, ok := ids[text]
		if !ok {
			return fmt.Errorf("tokenizer: tokenizer_config.json: %s %q is not in the vocab", f.key, text)
		}
		*f.dst = id
	}
	if c.AddBOS != nil {
		v.AddBOS = *c.AddBOS
	}
	if c.AddEOS != nil {
		v.AddEOS = *c.AddEOS
	}
	if c.CleanSpaces != nil {
		v.HF.CleanSpaces = *c.CleanSpaces
	}
	if !isNull(c.ChatTemplate) {
		var s string
		if err := json.Unmarshal(c.ChatTemplate, &s); err != nil {
			// A list of named templates: take "default", as transformers does.
			var named []struct {
				Name     string `json:"name"`
				Template string `json:"template"`
			}
			if err := json.Unmarshal(c.ChatTemplate, &named); err != nil {
				return fmt.Errorf("tokenizer: tokenizer_config.json: chat_template is neither a string nor a list of {name, template}")
			}
			for _, t := range named {
				if t.Name == "default" {
					s = t.Template
				}
			}
			if s == "" {
				return fmt.Errorf("tokenizer: tokenizer_config.json: chat_template list has no \"default\" entry")
			}
		}
		v.ChatTemplate = s
	}
	return nil
}
