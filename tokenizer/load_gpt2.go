package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// LoadGPT2 reads a byte-level BPE vocabulary from Hugging Face style files:
// vocab.json (token text → id, GPT-2 byte spelling) and merges.txt (one
// "left right" rule per line, highest priority first, an optional
// "#version" first line). Ids missing from vocab.json become unused tokens
// "[PAD<id>]", as llama.cpp's converter writes them. The vocab has Model
// "gpt2" and Pre "gpt-2"; set Pre (and AddSpecials) for other families.
func LoadGPT2(vocabJSON, mergesTXT string) (*Vocab, error) {
	vj, err := os.ReadFile(vocabJSON)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	mt, err := os.ReadFile(mergesTXT)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return ParseGPT2(vj, mt)
}

// ParseGPT2 is LoadGPT2 on the files' contents.
func ParseGPT2(vocabJSON, mergesTXT []byte) (*Vocab, error) {
	tokens, err := parseVocabJSON(vocabJSON)
	if err != nil {
		return nil, err
	}
	merges, err := parseMerges(mergesTXT)
	if err != nil {
		return nil, err
	}
	v := NewVocab(ModelBPE)
	v.Pre = "gpt-2"
	v.Tokens = tokens
	v.Types = make([]TokenType, len(tokens))
	for i, t := range tokens {
		v.Types[i] = TypeNormal
		if t == "" {
			v.Tokens[i] = fmt.Sprintf("[PAD%d]", i)
			v.Types[i] = TypeUnused
		}
	}
	v.Merges = merges
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v, nil
}

// maxVocab bounds the ids a vocab file may use (so a hostile file cannot
// ask for a huge token table): far above any real vocabulary.
const maxVocab = 1 << 24

// parseVocabJSON reads {"text": id, ...} into a token table indexed by id;
// ids not used are "".
func parseVocabJSON(data []byte) ([]string, error) {
	var m map[string]int64
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("tokenizer: vocab.json: %w", err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("tokenizer: vocab.json holds no tokens")
	}
	n := int64(0)
	for text, id := range m {
		if id < 0 || id >= maxVocab {
			return nil, fmt.Errorf("tokenizer: vocab.json: token %q has id %d out of range [0, %d)", text, id, maxVocab)
		}
		if text == "" {
			return nil, fmt.Errorf("tokenizer: vocab.json: empty token text (id %d)", id)
		}
		n = max(n, id+1)
	}
	tokens := make([]string, n)
	for text, id := range m {
		if tokens[id] != "" {
			return nil, fmt.Errorf("tokenizer: vocab.json: id %d used by %q and %q", id, tokens[id], text)
		}
		tokens[id] = text
	}
	return tokens, nil
}

// parseMerges reads merges.txt: one "left right" rule per line; blank lines
// and a leading "#version" line are skipped.
func parseMerges(data []byte) ([]string, error) {
	var merges []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || (i == 0 && strings.HasPrefix(line, "#version")) {
			continue
		}
		sp := strings.IndexByte(line, ' ')
		if sp <= 0 || sp == len(line)-1 || strings.IndexByte(line[sp+1:], ' ') >= 0 {
			return nil, fmt.Errorf("tokenizer: merges line %d: %q is not \"left right\"", i+1, line)
		}
		merges = append(merges, line)
	}
	return merges, nil
}
