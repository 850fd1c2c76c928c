package tokenizer

import "fmt"

// Special-token families AddSpecials knows.
const (
	FamilyLlama3 = "llama3"  // Llama 3.1+: 256 control tokens at 128000..128255
	FamilyQwen2  = "qwen2"   // Qwen2: <|endoftext|> <|im_start|> <|im_end|> at 151643..151645
	FamilyQwen25 = "qwen2.5" // Qwen2.5: Qwen2's three and 19 more, to 151664
	FamilyGPT2   = "gpt2"    // GPT-2: <|endoftext|> (50256 in GPT-2's own vocab)
)

type specialToken struct {
	text string
	typ  TokenType
}

// familySpecials returns the added tokens of a family, in id order starting
// at base (the size of the regular vocabulary).
func familySpecials(family string) (base int, toks []specialToken, err error) {
	switch family {
	case FamilyLlama3:
		names := []string{"<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
			"<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
			"<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"}
		for _, n := range names {
			toks = append(toks, specialToken{n, TypeControl})
		}
		for i := 3; len(toks) < 256; i++ {
			toks = append(toks, specialToken{fmt.Sprintf("<|reserved_special_token_%d|>", i), TypeControl})
		}
		return 128000, toks, nil
	case FamilyQwen2, FamilyQwen25:
		for _, n := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"} {
			toks = append(toks, specialToken{n, TypeControl})
		}
		if family == FamilyQwen25 {
			for _, n := range []string{"<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>",
				"<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
				"<|image_pad|>", "<|video_pad|>"} {
				toks = append(toks, specialToken{n, TypeControl})
			}
			// Qwen2.5's tokenizer_config marks these "special": false, which
			// llama.cpp's converter turns into user-defined tokens.
			for _, n := range []string{"<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
				"<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"} {
				toks = append(toks, specialToken{n, TypeUserDefined})
			}
		}
		return 151643, toks, nil
	case FamilyGPT2:
		return 50256, []specialToken{{"<|endoftext|>", TypeControl}}, nil
	}
	return 0, nil, fmt.Errorf("tokenizer: unknown special-token family %q (want %q, %q, %q or %q)",
		family, FamilyLlama3, FamilyQwen2, FamilyQwen25, FamilyGPT2)
}

// AddSpecials adds a model family's special tokens to a vocabulary read from
// files that leave them out (tiktoken ranks, vocab.json), and sets the
// family's special ids and flags as llama.cpp's converted GGUFs have them:
//
//	llama3:  BOS <|begin_of_text|>, EOS <|end_of_text|>, add BOS (EOT <|eot_id|>, EOM <|eom_id|> follow)
//	qwen2:   BOS and PAD <|endoftext|>, EOS <|im_end|>, no BOS added
//	gpt2:    BOS and EOS <|endoftext|>
//
// Tokens must be exactly the family's regular vocabulary (the special ids
// follow it), or already hold the family's special tokens at their ids
// (their types and the ids are then set).
func (v *Vocab) AddSpecials(family string) error {
	base, toks, err := familySpecials(family)
	if err != nil {
		return err
	}
	if v.Model != ModelBPE {
		return fmt.Errorf("tokenizer: %s special tokens need a %q vocab, not %q", family, ModelBPE, v.Model)
	}
	switch n := len(v.Tokens); {
	case n == base:
		for _, s := range toks {
			v.Tokens = append(v.Tokens, s.text)
		}
		if v.Scores != nil {
			v.Scores = append(v.Scores, make([]float32, len(toks))...)
		}
	case n >= base+len(toks):
		for i, s := range toks {
			if v.Tokens[base+i] != s.text {
				return fmt.Errorf("tokenizer: token %d is %q, not %s's %q", base+i, v.Tokens[base+i], family, s.text)
			}
		}
	default:
		return fmt.Errorf("tokenizer: %s special tokens start at id %d, but the vocab has %d tokens", family, base, n)
	}
	if v.Types == nil {
		v.Types = make([]TokenType, base)
		for i := range v.Types {
			v.Types[i] = TypeNormal
		}
	}
	for len(v.Types) < len(v.Tokens) {
		v.Types = append(v.Types, TypeNormal)
	}
	for i, s := range toks {
		v.Types[base+i] = s.typ
	}
	id := func(text string) int32 {
		for i, s := range toks {
			if s.text == text {
				return int32(base + i)
			}
		}
		return -1 // not reached: the texts below are in the tables (Validate would catch it)
	}
	switch family {
	case FamilyLlama3:
		v.BOS, v.EOS, v.AddBOS = id("<|begin_of_text|>"), id("<|end_of_text|>"), true
		v.EOT, v.EOM = id("<|eot_id|>"), id("<|eom_id|>")
	case FamilyQwen2, FamilyQwen25:
		v.BOS, v.EOS, v.PAD, v.AddBOS = id("<|endoftext|>"), id("<|im_end|>"), id("<|endoftext|>"), false
		v.EOT = id("<|im_end|>")
	case FamilyGPT2:
		v.BOS, v.EOS, v.AddBOS = id("<|endoftext|>"), id("<|endoftext|>"), false
	}
	ids, err := v.textIndex()
	if err != nil {
		return err
	}
	v.resolveSpecials(ids)
	return v.Validate()
}
