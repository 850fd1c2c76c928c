package tokenizer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// HFFiles returns v as a Hugging Face tokenizer: tokenizer.json and
// tokenizer_config.json, the way transformers' converters spell them, so
// that LoadHFTokenizer (and the tokenizers library) read it back:
//
//	gpt2 (byte-level)  BPE, merges as they are, pre-tokenizer ByteLevel (GPT-2
//	                   regex) or Split(Llama 3 / Qwen2 regex) + ByteLevel,
//	                   control and user-defined tokens as added tokens
//	llama (SPM)        BPE with byte fallback, merges made from the scores
//	                   (transformers' generate_merges, as its LlamaConverter
//	                   does), normalizer [Prepend("▁")] Replace(" " → "▁"),
//	                   decoder Replace, ByteFallback, Fuse[, Strip]
//
// BOS in front (TemplateProcessing) when v adds it. The SPM spelling is
// what the library runs for Llama 2: rank-ordered merges, which agree with
// SentencePiece's score order on real vocabularies (all of llama.cpp's
// llama-spm vectors) but are not the same algorithm. Pre-tokenizers
// without a tokenizer.json regex kiln knows, and hf-bpe vocabs, are errors.
func (v *Vocab) HFFiles() (tokenizerJSON, tokenizerConfig []byte, err error) {
	if err := v.Validate(); err != nil {
		return nil, nil, err
	}
	n := len(v.Tokens)
	added := []map[string]any{}
	vocab := make(map[string]int, n)
	model := map[string]any{
		"type": "BPE", "dropout": nil, "continuing_subword_prefix": nil, "end_of_word_suffix": nil,
		"unk_token": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
	}
	file := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil, "normalizer": nil, "pre_tokenizer": nil,
	}
	isAdded := func(id int) bool {
		switch v.Type(int32(id)) {
		case TypeControl, TypeUserDefined:
			return true
		case TypeUnknown:
			return v.Model == ModelSPM
		}
		return false
	}
	for id, text := range v.Tokens {
		if isAdded(id) {
			added = append(added, map[string]any{"id": id, "content": text, "single_word": false, "lstrip": false,
				"rstrip": false, "normalized": false, "special": v.Type(int32(id)) != TypeUserDefined})
			if v.Model == ModelBPE {
				continue // Llama 3 and Qwen2 keep added tokens out of model.vocab
			}
		}
		vocab[text] = id
	}
	cleanSpaces := false
	switch v.Model {
	case ModelBPE:
		pre, err := lookupPre(v.Pre)
		if err != nil {
			return nil, nil, err
		}
		byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}
		switch {
		case sameStages(pre.stages, stagesGPT2) && !pre.ignoreMerges:
			file["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": true}
		default:
			regex := ""
			for r, name := range hfSplitRegexes {
				if p, _ := lookupPre(name); name != "gpt-2" && sameStages(p.stages, pre.stages) && p.ignoreMerges == pre.ignoreMerges {
					regex = r
				}
			}
			if regex == "" {
				return nil, nil, fmt.Errorf("tokenizer: pre-tokenizer %q has no tokenizer.json spelling kiln knows (gpt-2, llama3, qwen2)", v.Pre)
			}
			file["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": regex}, "behavior": "Isolated", "invert": false},
				byteLevel,
			}}
		}
		if v.HF != nil && hasNFC(v.HF.Normalizer) {
			file["normalizer"] = map[string]any{"type": "NFC"}
		}
		file["decoder"] = byteLevel
		model["ignore_merges"] = pre.ignoreMerges
		model["merges"] = v.Merges
		cleanSpaces = pre.cleanSpaces
	case ModelSPM:
		if v.UNK >= 0 {
			model["unk_token"] = v.Tokens[v.UNK]
		}
		model["fuse_unk"] = true
		for id := range v.Tokens {
			if v.Type(int32(id)) == TypeByte {
				model["byte_fallback"] = true
			}
		}
		norm := []any{}
		if v.AddSpacePrefix {
			norm = append(norm, map[string]any{"type": "Prepend", "prepend": spaceMark})
		}
		norm = append(norm, map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": spaceMark})
		file["normalizer"] = map[string]any{"type": "Sequence", "normalizers": norm}
		dec := []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": spaceMark}, "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
		}
		if v.AddSpacePrefix {
			dec = append(dec, map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0})
		}
		file["decoder"] = map[string]any{"type": "Sequence", "decoders": dec}
		scores := v.Scores
		if scores == nil {
			scores = make([]float32, n)
		}
		model["merges"] = MergesFromScores(v.Tokens, scores)
	default:
		return nil, nil, fmt.Errorf("tokenizer: a %q vocab has no tokenizer.json spelling here", v.Model)
	}
	model["vocab"] = vocab
	file["model"] = model
	file["added_tokens"] = added
	file["post_processor"] = hfTemplateJSON(v)
	if tokenizerJSON, err = json.Marshal(file); err != nil {
		return nil, nil, err
	}

	cfg := map[string]any{
		"tokenizer_class": "PreTrainedTokenizerFast", "add_bos_token": v.AddBOS, "add_eos_token": v.AddEOS,
		"clean_up_tokenization_spaces": cleanSpaces,
	}
	for key, id := range map[string]int32{"bos_token": v.BOS, "eos_token": v.EOS, "unk_token": v.UNK, "pad_token": v.PAD} {
		if id >= 0 {
			cfg[key] = v.Tokens[id]
		}
	}
	if v.ChatTemplate != "" {
		cfg["chat_template"] = v.ChatTemplate
	}
	if tokenizerConfig, err = json.Marshal(cfg); err != nil {
		return nil, nil, err
	}
	return tokenizerJSON, tokenizerConfig, nil
}

// hfTemplateJSON is the post-processor that adds v's BOS/EOS, or null.
func hfTemplateJSON(v *Vocab) any {
	if !(v.AddBOS && v.BOS >= 0) && !(v.AddEOS && v.EOS >= 0) {
		if v.Model == ModelBPE {
			return map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}
		}
		return nil
	}
	var single []any
	special := map[string]any{}
	tok := func(id int32) {
		text := v.Tokens[id]
		single = append(single, map[string]any{"SpecialToken": map[string]any{"id": text, "type_id": 0}})
		special[text] = map[string]any{"id": text, "ids": []int32{id}, "tokens": []string{text}}
	}
	if v.AddBOS && v.BOS >= 0 {
		tok(v.BOS)
	}
	single = append(single, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}})
	if v.AddEOS && v.EOS >= 0 {
		tok(v.EOS)
	}
	return map[string]any{"type": "TemplateProcessing", "single": single,
		"pair":           append(append([]any{}, single...), map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}}),
		"special_tokens": special}
}

// sameStages reports whether two pre-tokenizer chains run the same splitters.
func sameStages(a, b []splitter) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if reflect.ValueOf(a[i]).Pointer() != reflect.ValueOf(b[i]).Pointer() {
			return false
		}
	}
	return true
}

// MergesFromScores is transformers' generate_merges (convert_slow_tokenizer.py,
// with vocab scores): the BPE merges a SentencePiece vocabulary amounts to.
// For each piece, in id order, every split into two pieces (by code point)
// that are both tokens, ordered by the ids of the two; then all of them by
// (the piece's score, left length, right length), highest first, a stable
// sort. scripts/hf-tokenizer-goldens.js spmMerges is the same in JavaScript.
func MergesFromScores(pieces []string, scores []float32) [][2]string {
	ids := make(map[string]int, len(pieces))
	for i, p := range pieces {
		ids[p] = i
	}
	type merge struct {
		l, r   string
		score  float32
		nl, nr int
	}
	var all []merge
	for i, p := range pieces {
		cps := []rune(p)
		var local []merge
		for k := 1; k < len(cps); k++ {
			l, r := string(cps[:k]), string(cps[k:])
			_, lok := ids[l]
			_, rok := ids[r]
			if lok && rok {
				local = append(local, merge{l, r, scores[i], k, len(cps) - k})
			}
		}
		sort.SliceStable(local, func(a, b int) bool {
			if ids[local[a].l] != ids[local[b].l] {
				return ids[local[a].l] < ids[local[b].l]
			}
			return ids[local[a].r] < ids[local[b].r]
		})
		all = append(all, local...)
	}
	sort.SliceStable(all, func(a, b int) bool {
		x, y := all[a], all[b]
		if x.score != y.score {
			return x.score > y.score
		}
		if x.nl != y.nl {
			return x.nl > y.nl
		}
		return x.nr > y.nr
	})
	out := make([][2]string, len(all))
	for i, m := range all {
		out[i] = [2]string{m.l, m.r}
	}
	return out
}
