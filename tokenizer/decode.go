package tokenizer

// Decode returns the text of ids as llama.cpp's llama_detokenize with
// remove_special=false and unparse_special=true (what the oracle's
// detokenize prints): pieces concatenated, control tokens as their text; for
// SentencePiece vocabs with a dummy-prefix space, the first token loses one
// leading space (with a tokenizer.json Metaspace decoder: every "▁" of it);
// for BPE vocabs whose pre-tokenizer asks for it (tokenizer.json vocabs:
// whose clean_up_tokenization_spaces does), spaces are tidied
// (" ," → ",", " 's" → "'s", ...). The result may hold invalid UTF-8
// when ids end inside a multi-byte character. Out-of-range ids add nothing.
func (t *Tokenizer) Decode(ids []int32) string {
	return string(t.AppendDecode(nil, ids))
}

// AppendDecode is Decode appending to dst.
func (t *Tokenizer) AppendDecode(dst []byte, ids []int32) []byte {
	start := len(dst)
	for i, id := range ids {
		if i == 0 {
			dst = append(dst, t.firstPiece(id)...)
			continue
		}
		dst = append(dst, t.piece(id)...)
	}
	if t.cleanSpaces {
		dst = dst[:start+cleanSpaces(dst[start:], nil)]
	}
	return dst
}

// cleanSpaces rewrites b in place as llama.cpp's detokenize does when
// clean_spaces is set, and returns the new length. The three passes are
// transcribed byte for byte, including their reads of bytes the same pass
// has already rewritten. When idx is not nil ([len(b)]), it is permuted
// alongside b, so that idx[k] tells which input byte output byte k came from.
func cleanSpaces(b []byte, idx []int32) int {
	total := len(b)
	// Pass 1: drop the space in " ?", " !", " .", " ,".
	n := total
	total = min(total, 1)
	for i := 1; i < n; i++ {
		x := b[i]
		if b[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') {
			total--
		}
		b[total] = x
		if idx != nil {
			idx[total] = idx[i]
		}
		total++
	}
	// Pass 2: " ' " becomes "'".
	n = total
	total = min(total, 1)
	for i := 1; i < n; i++ {
		x, xi := b[i], i
		if x == '\'' && i+1 < n && b[i-1] == ' ' && b[i+1] == ' ' {
			total--
			i++
			b[i] = 0
		}
		b[total] = x
		if idx != nil {
			idx[total] = idx[xi]
		}
		total++
	}
	// Pass 3: drop the space in " 's", " 'm", " 're", " 've".
	n = total
	total = min(total, 1)
	for i := 1; i < n; i++ {
		x := b[i]
		if b[i-1] == ' ' && x == '\'' && i+1 < n {
			x1 := b[i+1]
			switch {
			case x1 == 't' || x1 == 'd':
			case x1 == 's' || x1 == 'm':
				total--
			case i+2 < n:
				x2 := b[i+2]
				if (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e') {
					total--
				}
			}
		}
		b[total] = x
		if idx != nil {
			idx[total] = idx[i]
		}
		total++
	}
	return total
}
