package tokenizer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// LoadTikToken reads a tiktoken rank file (one "base64(token bytes) rank"
// line per token, as Llama 3's tokenizer.model) into a byte-level BPE
// vocabulary: token rank r becomes id r, spelled in GPT-2 byte characters,
// and the merge rules are recovered from the ranks the way Hugging Face's
// TikTokenConverter does, so the result equals the vocab.json + merges.txt
// pair published for the same model. Special tokens are not in the file:
// add them with AddSpecials. The vocab has Model "gpt2" and Pre "llama-bpe".
func LoadTikToken(path string) (*Vocab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return ParseTikToken(data)
}

// ParseTikToken is LoadTikToken on the file's contents.
func ParseTikToken(data []byte) (*Vocab, error) {
	var raw [][]byte // [rank] token bytes
	rank := map[string]int{}
	for ln, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("tokenizer: tiktoken line %d: want \"base64 rank\"", ln+1)
		}
		tok, err := base64.StdEncoding.DecodeString(string(line[:sp]))
		if err != nil || len(tok) == 0 {
			return nil, fmt.Errorf("tokenizer: tiktoken line %d: bad base64 token", ln+1)
		}
		r, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil || r < 0 || r >= maxVocab {
			return nil, fmt.Errorf("tokenizer: tiktoken line %d: bad rank %q", ln+1, line[sp+1:])
		}
		if _, dup := rank[string(tok)]; dup {
			return nil, fmt.Errorf("tokenizer: tiktoken line %d: token listed twice", ln+1)
		}
		for len(raw) <= r {
			raw = append(raw, nil)
		}
		if raw[r] != nil {
			return nil, fmt.Errorf("tokenizer: tiktoken line %d: rank %d used twice", ln+1, r)
		}
		raw[r] = tok
		rank[string(tok)] = r
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("tokenizer: tiktoken file holds no tokens")
	}
	for r, tok := range raw {
		if tok == nil {
			return nil, fmt.Errorf("tokenizer: tiktoken ranks skip %d", r)
		}
	}

	v := NewVocab(ModelBPE)
	v.Pre = "llama-bpe"
	v.Tokens = make([]string, len(raw))
	v.Types = make([]TokenType, len(raw))
	for r, tok := range raw {
		v.Tokens[r] = byteEncodeString(string(tok))
		v.Types[r] = TypeNormal
	}
	v.Merges = recoverMerges(raw, rank)
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v, nil
}

// recoverMerges lists, for every token of two or more bytes in rank order,
// each split into two parts that are both tokens, ordered by the parts'
// ranks (Hugging Face's extract_vocab_merges_from_model).
func recoverMerges(raw [][]byte, rank map[string]int) []string {
	type split struct{ l, r int }
	var merges []string
	var local []split
	for _, tok := range raw {
		local = local[:0]
		for i := 1; i < len(tok); i++ {
			l, okl := rank[string(tok[:i])]
			r, okr := rank[string(tok[i:])]
			if okl && okr {
				local = append(local, split{l, r})
			}
		}
		slices.SortStableFunc(local, func(a, b split) int {
			if a.l != b.l {
				return a.l - b.l
			}
			return a.r - b.r
		})
		for _, s := range local {
			merges = append(merges, byteEncodeString(string(raw[s.l]))+" "+byteEncodeString(string(raw[s.r])))
		}
	}
	return merges
}
