package tokenizer

import "fmt"

// A byte-level BPE vocabulary first splits text into words with a chain of
// regular expressions chosen by tokenizer.ggml.pre; merges never cross a word
// boundary. llama.cpp runs each expression over every piece the previous one
// produced, keeping both the matches and the text between them as pieces.
//
//	"Hello, world!"  --gpt2-->  "Hello" | "," | " world" | "!"
//
// The expressions use lookahead (\s+(?!\S)) that Go's regexp lacks, so each
// is hand-written here the way llama.cpp's unicode.cpp runs it: the custom
// GPT-2/Llama 3/Qwen2 splitters, and std::regex (ECMAScript, leftmost match,
// first alternative wins) for the rest, over llama.cpp's category table.

// splitter splits one piece of code points, appending the lengths of the
// sub-pieces (summing to len(c)) to out.
type splitter func(c []uint32, f []uint16, out []int32) []int32

// preTokenizer is the configuration llama.cpp derives from tokenizer.ggml.pre.
type preTokenizer struct {
	name         string
	stages       []splitter
	cleanSpaces  bool // llama.cpp's clean_spaces: Decode removes " " before ,.?! and in " 's" ...
	ignoreMerges bool // a word that is a token is taken whole, without merging
	addBOS       bool // llama.cpp's default add_bos for this pre-tokenizer
	noBOS        bool // llama.cpp clears the default BOS id (chatglm)
}

// Stage chains, named after llama.cpp's llama_vocab_pre_type.
var (
	stagesDefault       = []splitter{splitPunctRuns, splitGPT2, splitNumberRuns, splitDigitTriples}
	stagesGPT2          = []splitter{splitGPT2}
	stagesLlama3        = []splitter{splitLlama3}
	stagesQwen2         = []splitter{splitQwen2}
	stagesQwen35        = []splitter{splitQwen35}
	stagesStarcoder     = []splitter{splitEachNumber, splitGPT2}
	stagesFalcon        = []splitter{splitPunctRunsFalcon, splitGPT2, splitDigitTriples}
	stagesDeepseekCoder = []splitter{splitEachNewline, splitSpaceLetters, splitSpacePunct, splitCJK, splitEachNumber}
	stagesDeepseekLLM   = []splitter{splitEachNewline, splitSpaceLatin, splitSpaceASCIIPunct, splitTrailingSpace, splitCJK, splitNumberRuns}
)

// preTokenizers maps tokenizer.ggml.pre to llama.cpp's settings for it (see
// llama_vocab::impl::load and llm_tokenizer_bpe). Pre-tokenizers whose
// expressions kiln does not implement are absent: New rejects them.
var preTokenizers = func() map[string]preTokenizer {
	m := map[string]preTokenizer{}
	add := func(stages []splitter, clean bool, names ...string) {
		for _, n := range names {
			m[n] = preTokenizer{name: n, stages: stages, cleanSpaces: clean}
		}
	}
	add(stagesDefault, true, "", "default")
	add(stagesGPT2, true, "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
		"a.x-4.0", "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe",
		"mpt", "olmo", "jais", "exaone4")
	add(stagesGPT2, false, "trillion", "granite-docling")
	add(stagesLlama3, true, "dbrx", "smaug-bpe")
	add(stagesQwen2, false, "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "grok-2", "solar-open")
	add(stagesQwen2, true, "megrez", "stablelm2")
	add(stagesQwen35, false, "qwen35")
	add(stagesStarcoder, true, "starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2")
	add(stagesStarcoder, false, "command-r", "smollm")
	add(stagesFalcon, true, "falcon")
	add(stagesDeepseekCoder, false, "deepseek-coder")
	add(stagesDeepseekLLM, false, "deepseek-llm")
	for _, n := range []string{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"} {
		m[n] = preTokenizer{name: n, stages: stagesLlama3, cleanSpaces: true, ignoreMerges: true, addBOS: true}
	}
	for _, n := range []string{"chatglm-bpe", "glm4"} {
		m[n] = preTokenizer{name: n, stages: stagesLlama3, cleanSpaces: true, noBOS: true}
	}
	return m
}()

func lookupPre(name string) (preTokenizer, error) {
	p, ok := preTokenizers[name]
	if !ok {
		return p, fmt.Errorf("tokenizer: unsupported pre-tokenizer %q", name)
	}
	return p, nil
}

// pretokenize splits c (with flags f) into words, appending their lengths in
// code points to out. tmp is scratch.
func (p *preTokenizer) pretokenize(c []uint32, f []uint16, out, tmp []int32) (words, scratch []int32) {
	cur := append(out[:0], int32(len(c)))
	for _, stage := range p.stages {
		next := tmp[:0]
		start := 0
		for _, n := range cur {
			end := start + int(n)
			next = stage(c[start:end], f[start:end], next)
			start = end
		}
		cur, tmp = next, cur
	}
	return cur, tmp
}
