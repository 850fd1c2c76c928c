package tokenizer

import (
	"fmt"
	"slices"
	"strings"
)

// AsSPM returns v as a vocab llama.cpp can read: a ModelHFBPE vocab becomes
// ModelSPM ("llama") with merge priorities carried as scores, other vocabs
// come back unchanged. It is what a GGUF written from a Hugging Face folder
// holds, since llama.cpp has no rank-ordered BPE over characters.
//
// llama.cpp's SPM tokenizer merges, among adjacent symbol pairs whose
// concatenation is a token, the one whose token has the highest score
// (leftmost on ties); HF's BPE merges the listed pair of lowest rank
// (leftmost on ties). With score = -rank of the first merge that makes the
// token the two agree whenever every multi-character token is made by one
// listed merge and no other split of it is reachable, or, as in a vocab
// converted from SentencePiece (Llama 2, Mistral: every split of a piece
// into two pieces is a merge, the merges of one piece side by side), by
// several merges of consecutive ranks: the order between tokens is then the
// same, and only two splits of one token competing in one word can go
// differently (HF takes the lower rank, SPM the leftmost). Where merges
// making one token have another token's merge between them, the token's
// first merge decides, which can differ from HF only where such merges
// compete (GGUFCaveats counts those tokens;
// Llama 2 has some among equal-score pieces); tokens that no merge makes
// (added tokens, <0xNN>) get a score below every merge.
//
// The normalizer must be what llama.cpp's add_space_prefix and escaping do:
// an optional Prepend("▁") followed by Replace(" " → "▁"); or, with no
// normalizer, a Metaspace("▁", split false) pre-tokenizer, whose prepend
// scheme becomes add_space_prefix (it differs a little: see GGUFCaveats).
//
// Where it cannot agree, plainly: text with a character that is not a
// token, in a vocab without the <0xNN> byte tokens for it. HF then emits
// <unk> (one per run of such characters with fuse_unk); kiln's SPM emits
// <unk> per byte, and llama.cpp throws (llama_vocab::byte_to_token). See
// MissingByteTokens. And text holding an added token's text, when
// tokenizer.json marks it normalized: the library matches it in normalized
// text, llama.cpp splits special tokens out of the raw text first.
func (v *Vocab) AsSPM() (*Vocab, error) {
	if v.Model != ModelHFBPE {
		return v, nil
	}
	h := v.HF
	if h.IgnoreMerges {
		return nil, fmt.Errorf("tokenizer: ignore_merges has no llama.cpp SPM equivalent")
	}
	prefix, err := spmPrefix(h)
	if err != nil {
		return nil, err
	}
	scores, _, err := v.mergeScores()
	if err != nil {
		return nil, err
	}
	s := v.Clone()
	s.Model = ModelSPM
	s.Pre = ""
	s.Scores = scores
	s.Merges = nil
	s.AddSpacePrefix = prefix
	s.HF = nil
	if s.Types == nil {
		s.Types = make([]TokenType, len(s.Tokens))
	}
	return s, s.Validate()
}

// mergeScores gives every token the SPM score -rank of the first merge
// that makes it (tokens no merge makes: below every merge), and counts the
// tokens made by merges that other tokens' merges come between, where one
// score cannot order them as the ranks do.
func (v *Vocab) mergeScores() (scores []float32, interleaved int, err error) {
	const maxRank = 1 << 24 // float32 holds every integer rank exactly
	if len(v.Merges) >= maxRank {
		return nil, 0, fmt.Errorf("tokenizer: %d merges do not fit float32 scores exactly", len(v.Merges))
	}
	ids, err := v.textIndex()
	if err != nil {
		return nil, 0, err
	}
	scores = make([]float32, len(v.Tokens))
	last := make([]int, len(v.Tokens)) // rank of the last merge making each token, -1 for none
	split := make([]bool, len(v.Tokens))
	for i := range scores {
		last[i] = -1
		if len([]rune(v.Tokens[i])) > 1 {
			scores[i] = -maxRank // never made by a merge: below every merge
		}
	}
	for rank, m := range v.Merges {
		l, r, ok := strings.Cut(m, " ")
		if !ok {
			return nil, 0, fmt.Errorf("tokenizer: merge %d %q is not \"left right\"", rank, m)
		}
		id, ok := ids[l+r]
		if !ok {
			return nil, 0, fmt.Errorf("tokenizer: merge %d %q makes %q, which is not a token", rank, m, l+r)
		}
		if last[id] < 0 {
			scores[id] = -float32(rank)
		} else if last[id] != rank-1 && !split[id] {
			split[id] = true
			interleaved++
		}
		last[id] = rank
	}
	return scores, interleaved, nil
}

// spmPrefix returns the add_space_prefix that the normalizer and
// pre-tokenizer of h amount to, or why llama.cpp has no equivalent.
func spmPrefix(h *HFSettings) (bool, error) {
	steps := h.Normalizer
	if ms := h.Metaspace; ms != nil {
		if ms.Split || ms.Replacement != spaceMark || len(steps) > 0 {
			return false, fmt.Errorf("tokenizer: pre_tokenizer %+v with normalizer %v has no llama.cpp SPM equivalent (want Metaspace(\"▁\", split false) and no normalizer)", *ms, steps)
		}
		return ms.Prepend != PrependNever, nil
	}
	prefix := false
	if len(steps) > 0 && steps[0].Prepend != "" {
		if steps[0].Prepend != "▁" {
			return false, fmt.Errorf("tokenizer: normalizer Prepend(%q) has no llama.cpp SPM equivalent (only \"▁\", as add_space_prefix)", steps[0].Prepend)
		}
		prefix = true
		steps = steps[1:]
	}
	if len(steps) != 1 || steps[0].NFC || steps[0].Prepend != "" || steps[0].Old != " " || steps[0].New != "▁" {
		return false, fmt.Errorf("tokenizer: normalizer %v has no llama.cpp SPM equivalent (want [Prepend(\"▁\")] Replace(\" \" → \"▁\"))", h.Normalizer)
	}
	return prefix, nil
}

// GGUFCaveats says, one sentence each, where llama.cpp reading a GGUF
// written from v (Metadata) tokenizes differently from the Hugging Face
// library reading v's tokenizer.json; none for vocabs not read from one.
func (v *Vocab) GGUFCaveats() []string {
	h := v.HF
	if h == nil {
		return nil
	}
	var out []string
	if hasNFC(h.Normalizer) {
		out = append(out, "tokenizer.json's NFC normalizer has no GGUF equivalent: llama.cpp does not compose text first, so text not in NFC (such as decomposed accents, e + U+0301) tokenizes differently")
	}
	if ids, err := v.textIndex(); err == nil {
		var regular []string
		for _, list := range [][]string{eogTexts, eotTexts, eomTexts, fimPreTexts, fimSufTexts, fimMidTexts, fimPadTexts, fimRepTexts, fimSepTexts} {
			for _, text := range list {
				if id, ok := ids[text]; ok && v.Type(id) == TypeNormal && !slices.Contains(regular, text) {
					regular = append(regular, text)
				}
			}
		}
		if len(regular) > 0 {
			out = append(out, fmt.Sprintf("regular tokens %q have texts llama.cpp makes control tokens of (it splits them out of text and ends generation on some), the tokenizers library does not", regular))
		}
	}
	if v.Model != ModelHFBPE {
		return out
	}
	if n := v.MissingByteTokens(); n > 0 {
		out = append(out, fmt.Sprintf("the vocab lacks %d of the 256 <0xNN> byte tokens: text with characters outside it tokenizes differently in llama.cpp (which throws) than in Hugging Face (<unk>)", n))
	}
	if ms := h.Metaspace; ms != nil && ms.Prepend != PrependNever {
		s := "the Metaspace pre-tokenizer puts no \"▁\" in front of text that starts with a space or \"▁\", where llama.cpp's add_space_prefix does"
		if ms.Prepend == PrependFirst {
			s += "; and with prepend_scheme first none after an added token, where llama.cpp does"
		}
		out = append(out, s)
	}
	if _, n, err := v.mergeScores(); err == nil && n > 0 {
		out = append(out, fmt.Sprintf("%d tokens are made by merges that other tokens' merges come between; their score is their first merge's, so where their later merges compete llama.cpp may merge in another order", n))
	}
	if len(h.NormalizedAdded) > 0 {
		out = append(out, fmt.Sprintf("%d added tokens are normalized: the library finds them in normalized text (\"▁\" in front of one is part of it), llama.cpp in the raw text", len(h.NormalizedAdded)))
	}
	return out
}

// MissingByteTokens reports how many of the 256 <0xNN> byte tokens v lacks;
// text with a character outside the vocab tokenizes differently in HF and
// llama.cpp when it is not 0 (see AsSPM).
func (v *Vocab) MissingByteTokens() int {
	have := [256]bool{}
	for _, t := range v.Tokens {
		if b, ok := byteTokenValue(t); ok && len(t) == 6 && t[5] == '>' {
			have[b] = true
		}
	}
	n := 0
	for _, h := range have {
		if !h {
			n++
		}
	}
	return n
}
