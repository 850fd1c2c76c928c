package tokenizer

import "golang.org/x/text/unicode/norm"

// session holds the scratch buffers of one Encode call; sessions are pooled
// so that steady-state encoding allocates only its result.
type session struct {
	frags, frags2 []fragment
	present       []int32
	spm           spmScratch
	bpe           bpeScratch
	hf            hfScratch
}

// Encode tokenizes text without adding BOS/EOS, as llama.cpp's
// llama_tokenize(add_special=false, parse_special=parseSpecial). With
// parseSpecial, control-token texts such as "<|im_start|>" become their
// tokens; without it they are tokenized as plain text. User-defined tokens
// are recognised either way.
func (t *Tokenizer) Encode(text string, parseSpecial bool) []int32 {
	return t.encode(nil, text, false, parseSpecial)
}

// EncodePrompt tokenizes a prompt as llama.cpp's
// llama_tokenize(add_special=true, parse_special=true): special-token texts
// are parsed, and BOS/EOS are added as the vocab asks (AddBOS, AddEOS).
func (t *Tokenizer) EncodePrompt(text string) []int32 {
	return t.encode(nil, text, true, true)
}

// AppendEncode is Encode appending to dst.
func (t *Tokenizer) AppendEncode(dst []int32, text string, parseSpecial bool) []int32 {
	return t.encode(dst, text, false, parseSpecial)
}

func (t *Tokenizer) encode(out []int32, text string, addSpecial, parseSpecial bool) []int32 {
	s := t.scratch.Get().(*session)
	defer t.scratch.Put(s)
	v := t.v
	if addSpecial && v.AddBOS && v.BOS >= 0 {
		out = append(out, v.BOS)
	}
	if t.hf != nil {
		// The tokenizers library finds added tokens its own way (in
		// normalized text too), so it does not use partition.
		out = t.hf.encode(out, text, parseSpecial, &s.hf)
		if addSpecial && v.AddEOS && v.EOS >= 0 {
			out = append(out, v.EOS)
		}
		return out
	}
	frags := t.partition(text, parseSpecial, s)
	switch {
	case t.spm != nil:
		// A text fragment at the start, or right after a special token, gets
		// SentencePiece's dummy-prefix space (when the vocab asks for one).
		prevSpecial := true
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				prevSpecial = true
				continue
			}
			out = t.spm.encode(out, text[f.lo:f.hi], v.AddSpacePrefix && prevSpecial, &s.spm)
			prevSpecial = false
		}
	default:
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				continue
			}
			frag := text[f.lo:f.hi]
			if t.nfc {
				frag = norm.NFC.String(frag)
			}
			out = t.bpe.encode(out, frag, &s.bpe)
		}
	}
	if addSpecial && v.AddEOS && v.EOS >= 0 {
		out = append(out, v.EOS)
	}
	return out
}
