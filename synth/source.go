package synth

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kiln/tokenizer"
)

// LoadVocab reads a vocabulary from source, chosen by its name and contents:
//
//	*.gguf                  every tokenizer.* key of a model or vocab-only GGUF, verbatim
//	*.model                 a SentencePiece model (protobuf), or tiktoken ranks
//	                        ("base64 rank" lines, as Llama 3's tokenizer.model)
//	*.tiktoken              tiktoken ranks
//	VOCAB.json[,MERGES]     Hugging Face byte-level BPE; MERGES defaults to the file beside
//	                        VOCAB named merges.txt (x-vocab.json -> x-merges.txt,
//	                        x-encoder.json -> x-vocab.bpe, else merges.txt)
//
// Byte-level vocabularies get their family's special tokens and
// pre-tokenizer (tokenizer.ggml.pre) by size, as llama.cpp's converter
// would write them: 128000 regular tokens are Llama 3 ("llama-bpe", 256
// control tokens after them), 151643 are Qwen2.5 ("qwen2", <|endoftext|>,
// <|im_start|>, <|im_end|> and the rest), 50257 are GPT-2 ("gpt-2",
// <|endoftext|>). Others are written as loaded.
func LoadVocab(source string) (*Vocab, error) {
	if vocabJSON, merges, ok := strings.Cut(source, ","); ok {
		return loadGPT2(source, vocabJSON, merges)
	}
	switch strings.ToLower(filepath.Ext(source)) {
	case ".gguf":
		return VocabFromGGUF(source)
	case ".json":
		merges, err := findMerges(source)
		if err != nil {
			return nil, err
		}
		return loadGPT2(source, source, merges)
	case ".tiktoken":
		return loadTikToken(source)
	case ".model":
		head, err := readHead(source, 256)
		if err != nil {
			return nil, err
		}
		if looksTikToken(head) {
			return loadTikToken(source)
		}
		v, err := tokenizer.LoadSentencePiece(source)
		if err != nil {
			return nil, fmt.Errorf("synth: vocabulary %s: %w", source, err)
		}
		return fromTokenizer(source, v)
	}
	return nil, fmt.Errorf("synth: cannot read a vocabulary from %q: want a .gguf, a SentencePiece or tiktoken .model, or vocab.json (with merges.txt)", source)
}

// fromTokenizer wraps a tokenizer.Vocab's metadata.
func fromTokenizer(source string, v *tokenizer.Vocab) (*Vocab, error) {
	if err := v.Validate(); err != nil {
		return nil, fmt.Errorf("synth: vocabulary %s: %w", source, err)
	}
	return &Vocab{KV: v.Metadata(), Size: v.Size(), Source: source}, nil
}

// families maps a byte-level vocabulary's regular size to its special
// tokens and pre-tokenizer.
var families = map[int]struct{ family, pre string }{
	128000: {tokenizer.FamilyLlama3, "llama-bpe"},
	151643: {tokenizer.FamilyQwen25, "qwen2"},
	50257:  {tokenizer.FamilyGPT2, "gpt-2"}, // GPT-2's vocab.json already holds <|endoftext|>
}

func withFamily(source string, v *tokenizer.Vocab) (*Vocab, error) {
	if f, ok := families[v.Size()]; ok {
		v.Pre = f.pre
		if err := v.AddSpecials(f.family); err != nil {
			return nil, fmt.Errorf("synth: vocabulary %s: %w", source, err)
		}
	}
	return fromTokenizer(source, v)
}

func loadGPT2(source, vocabJSON, merges string) (*Vocab, error) {
	v, err := tokenizer.LoadGPT2(vocabJSON, merges)
	if err != nil {
		return nil, fmt.Errorf("synth: vocabulary %s: %w", source, err)
	}
	return withFamily(source, v)
}

func loadTikToken(source string) (*Vocab, error) {
	v, err := tokenizer.LoadTikToken(source)
	if err != nil {
		return nil, fmt.Errorf("synth: vocabulary %s: %w", source, err)
	}
	return withFamily(source, v)
}

// findMerges names the merges file beside a vocab.json.
func findMerges(vocabJSON string) (string, error) {
	dir, base := filepath.Split(vocabJSON)
	var tries []string
	if p, ok := strings.CutSuffix(base, "vocab.json"); ok {
		tries = append(tries, p+"merges.txt")
	}
	if p, ok := strings.CutSuffix(base, "encoder.json"); ok {
		tries = append(tries, p+"vocab.bpe")
	}
	tries = append(tries, "merges.txt")
	for _, t := range tries {
		if _, err := os.Stat(filepath.Join(dir, t)); err == nil {
			return filepath.Join(dir, t), nil
		}
	}
	return "", fmt.Errorf("synth: no merges file beside %s (tried %s): name it as VOCAB.json,MERGES.txt", vocabJSON, strings.Join(tries, ", "))
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	defer f.Close()
	buf := make([]byte, n)
	k, _ := bufio.NewReader(f).Read(buf)
	return buf[:k], nil
}

// looksTikToken reports whether a file starts with a "base64 rank" line.
func looksTikToken(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	tok, rank, ok := bytes.Cut(line, []byte(" "))
	if !ok || len(tok) == 0 || len(rank) == 0 {
		return false
	}
	for _, c := range tok {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	for _, c := range bytes.TrimSuffix(rank, []byte("\r")) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
