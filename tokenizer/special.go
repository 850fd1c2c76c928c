package tokenizer

import (
	"sort"
	"strings"
)

// attr is llama.cpp's llama_token_attr: a token's type as a bit set, plus
// the strip flags some special tokens carry.
type attr uint16

const (
	attrUnknown     attr = 1 << 0
	attrUnused      attr = 1 << 1
	attrNormal      attr = 1 << 2
	attrControl     attr = 1 << 3
	attrUserDefined attr = 1 << 4
	attrByte        attr = 1 << 5
	attrLStrip      attr = 1 << 7 // whitespace before the token is dropped when it is split out of text
	attrRStrip      attr = 1 << 8 // whitespace after the token is dropped when it is split out of text

	attrSpecial = attrControl | attrUserDefined | attrUnknown // split out of text before tokenizing
)

func typeAttr(t TokenType) attr {
	switch t {
	case TypeNormal:
		return attrNormal
	case TypeUnknown:
		return attrUnknown
	case TypeControl:
		return attrControl
	case TypeUserDefined:
		return attrUserDefined
	case TypeUnused:
		return attrUnused
	case TypeByte:
		return attrByte
	}
	return 0 // undefined, and any value llama.cpp does not know
}

// Token texts llama.cpp recognises on load (llama_vocab::impl::load). When
// the file does not name a special id, llama.cpp takes a token with one of
// these texts; it walks a hash map, so with several candidates its pick is
// arbitrary: kiln takes the first text of the list that the vocab holds.
var (
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
		"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}

	// eogTexts end generation wherever they are in the vocab.
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
		"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]",
		"[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
		"<｜end▁of▁sentence｜>", "[e~["}
)

// detectedSpecials lists the ids llama.cpp finds by text, with their lists.
func (v *Vocab) detectedSpecials() []struct {
	id    *int32
	texts []string
} {
	return []struct {
		id    *int32
		texts []string
	}{
		{&v.EOT, eotTexts}, {&v.EOM, eomTexts},
		{&v.FIMPre, fimPreTexts}, {&v.FIMSuf, fimSufTexts}, {&v.FIMMid, fimMidTexts},
		{&v.FIMPad, fimPadTexts}, {&v.FIMRep, fimRepTexts}, {&v.FIMSep, fimSepTexts},
	}
}

// resolveSpecials fills the special ids llama.cpp finds by token text (EOT,
// EOM, FIM) where v names none, and returns the ids it filled: llama.cpp
// marks those tokens control.
func (v *Vocab) resolveSpecials(ids map[string]int32) (found []int32) {
	for _, d := range v.detectedSpecials() {
		if *d.id >= 0 {
			continue
		}
		for _, text := range d.texts {
			if id, ok := ids[text]; ok {
				*d.id = id
				found = append(found, id)
				break
			}
		}
	}
	return found
}

// tokenAttrs derives every token's attributes and the end-of-generation set
// the way llama.cpp's load does, from the (resolved) vocab. detected are the
// ids resolveSpecials filled by text.
//
// A vocab read from tokenizer.json (v.HF set) keeps the attributes its
// types give: the tokenizers library splits out exactly the added tokens,
// so a regular token whose text llama.cpp would make control (Qwen2's
// "</s>") stays a regular token, and ends generation only as EOS. The
// added tokens' end-of-generation set is found as for GGUF vocabs.
func tokenAttrs(v *Vocab, ids map[string]int32, detected []int32) (attrs []attr, eog map[int32]bool) {
	n := len(v.Tokens)
	attrs = make([]attr, n)
	for i := range attrs {
		attrs[i] = typeAttr(v.Type(int32(i)))
	}
	for _, id := range detected {
		attrs[id] |= attrControl
	}

	eog = map[int32]bool{}
	for _, id := range []int32{v.FIMPad, v.FIMRep, v.FIMSep} {
		if id >= 0 {
			eog[id] = true
		}
	}
	for _, text := range eogTexts {
		if id, ok := ids[text]; ok {
			eog[id] = true
			attrs[id] |= attrControl
		}
	}
	// gpt-oss: these are always rendered, so llama.cpp makes them user-defined.
	for _, text := range []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"} {
		if id, ok := ids[text]; ok {
			attrs[id] = attrUserDefined
		}
	}
	for _, id := range []int32{v.EOS, v.EOT, v.EOM} {
		if id >= 0 {
			eog[id] = true
		}
	}
	inEOG := func(text string) (int32, bool) {
		id, ok := ids[text]
		return id, ok && eog[id]
	}
	// o200k_harmony and solar-open: <|end|> separates messages, it does not end generation.
	_, hasReturn := inEOG("<|return|>")
	_, hasCall := inEOG("<|call|>")
	_, hasCalls := inEOG("<|calls|>")
	_, hasFlush := inEOG("<|flush|>")
	if end, hasEnd := inEOG("<|end|>"); hasEnd && ((hasReturn && (hasCall || hasCalls)) || ((hasCall || hasCalls) && hasFlush)) {
		delete(eog, end)
		attrs[end] = attrUserDefined
	}
	// gemma4 and paddleocr: </s> is an ordinary token there.
	if _, ok := inEOG("<|tool_response>"); ok {
		if s, ok := inEOG("</s>"); ok {
			delete(eog, s)
			attrs[s] = attrNormal
		}
	}
	if v.HF != nil {
		for i := range attrs {
			attrs[i] = typeAttr(v.Type(int32(i)))
		}
		for id := range eog {
			if v.Type(id) == TypeNormal && id != v.EOS {
				delete(eog, id) // Qwen2's regular "</s>" is text there
			}
		}
	}
	return attrs, eog
}

// specialsByLength returns the ids split out of text before tokenizing
// (control, user-defined and unknown tokens), longest text first. llama.cpp
// sorts with an unstable sort; ties here keep id order.
func specialsByLength(texts []string, attrs []attr) []int32 {
	var sp []int32
	for id, a := range attrs {
		if a&attrSpecial != 0 {
			sp = append(sp, int32(id))
		}
	}
	sort.SliceStable(sp, func(i, j int) bool { return len(texts[sp[i]]) > len(texts[sp[j]]) })
	return sp
}

// applyNameQuirks sets the per-model strip flags llama.cpp keys on the model
// name and pre-tokenizer (the attributes are missing from GGUF files).
func applyNameQuirks(v *Vocab, ids map[string]int32, attrs []attr, specials []int32) {
	set := func(text string, a attr, on bool) {
		if id, ok := ids[text]; ok {
			if on {
				attrs[id] |= a
			} else {
				attrs[id] &^= a
			}
		}
	}
	name := strings.ToLower(v.Name)
	switch {
	case v.Pre == "jina-v2-de" || v.Pre == "jina-v2-es" || v.Pre == "jina-v2-code":
		set("<mask>", attrLStrip, true)
	case strings.Contains(name, "phi-3") || strings.Contains(name, "phi3"):
		for _, id := range specials {
			attrs[id] |= attrRStrip
		}
		set("</s>", attrRStrip, true)
		for _, t := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(t, attrRStrip, false)
		}
	case strings.Contains(name, "modern-bert"):
		set("[MASK]", attrLStrip, true)
	}
}
