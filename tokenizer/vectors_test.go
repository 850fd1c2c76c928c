package tokenizer

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
)

// vector is one llama.cpp tokenizer test case: text → ids (no BOS/EOS,
// specials not parsed).
type vector struct {
	text string
	ids  []int32
}

// readVectors reads llama.cpp's <name>.gguf.inp/.out pair from
// shared/models/llamacpp-vocab (inputs separated by
// "\n__ggml_vocab_test__\n", one line of ids per input).
func readVectors(t *testing.T, name string) []vector {
	t.Helper()
	dir := filepath.Join(testutil.SharedModels(t), "llamacpp-vocab")
	inp := testutil.ReadData(t, filepath.Join(dir, name+".gguf.inp"))
	out := testutil.ReadData(t, filepath.Join(dir, name+".gguf.out"))
	const sep = "\n__ggml_vocab_test__\n"
	var texts []string
	for s := string(inp); len(s) > 0; {
		i := strings.Index(s, sep)
		if i < 0 {
			texts = append(texts, s)
			break
		}
		texts = append(texts, s[:i])
		s = s[i+len(sep):]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d inputs but %d outputs", name, len(texts), len(lines))
	}
	vs := make([]vector, len(texts))
	for i, text := range texts {
		vs[i].text = text
		for _, f := range strings.Fields(lines[i]) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s line %d: %v", name, i+1, err)
			}
			vs[i].ids = append(vs[i].ids, int32(id))
		}
	}
	return vs
}

// ggufTokenizer builds a tokenizer from a vocab GGUF under shared/models
// (cached across tests).
func ggufTokenizer(t testing.TB, rel string) *Tokenizer {
	t.Helper()
	return memoize(t, "gguf:"+rel, func() *Tokenizer { return loadGGUFTokenizer(t, rel) })
}

func loadGGUFTokenizer(t testing.TB, rel string) *Tokenizer {
	f, err := gguf.Open(testutil.SharedModel(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func checkVectors(t *testing.T, tok *Tokenizer, vs []vector) {
	t.Helper()
	fails := 0
	for _, v := range vs {
		got := tok.Encode(v.text, false)
		if !slices.Equal(got, v.ids) {
			fails++
			if fails <= 8 {
				t.Errorf("Encode(%q)\n got %v\nwant %v", v.text, got, v.ids)
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d of %d vectors differ", fails, len(vs))
	}
}

// TestLlamaCppVectors checks every llama.cpp test vector whose vocab GGUF is
// in shared/models.
func TestLlamaCppVectors(t *testing.T) {
	for _, name := range []string{
		"ggml-vocab-llama-spm", "ggml-vocab-phi-3",
		"ggml-vocab-gpt-2", "ggml-vocab-starcoder", "ggml-vocab-deepseek-coder", "ggml-vocab-deepseek-llm",
		"ggml-vocab-falcon", "ggml-vocab-mpt", "ggml-vocab-refact",
	} {
		t.Run(name, func(t *testing.T) {
			vs := readVectors(t, name)
			tok := ggufTokenizer(t, filepath.Join("llamacpp-vocab", name+".gguf"))
			checkVectors(t, tok, vs)
		})
	}
}
