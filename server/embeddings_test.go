package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/openai/openai-go/v3"

	"kiln/convert"
	"kiln/internal/testutil"
	"kiln/server"
	"kiln/synth"
)

func embed(t *testing.T, c openai.Client, p openai.EmbeddingNewParams) *openai.CreateEmbeddingResponse {
	t.Helper()
	r, err := c.Embeddings.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// decodeB64 reads OpenAI's base64 embedding: little-endian float32s.
func decodeB64(t *testing.T, raw string) []float64 {
	t.Helper()
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("base64 embedding %.40s: %v", raw, err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		t.Fatalf("base64 embedding: %d bytes, %v", len(b), err)
	}
	v := make([]float64, len(b)/4)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return v
}

func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab, aa, bb = ab+a[i]*b[i], aa+a[i]*a[i], bb+b[i]*b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

// TestSDKEmbeddings runs /v1/embeddings through the official SDK: a
// string, a batch of strings (each the same as alone), token ids, base64
// (the same floats), unit norm, usage, and the refusals.
func TestSDKEmbeddings(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	c := ts.client()
	one := embed(t, c, openai.EmbeddingNewParams{Model: "tiny", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello world")}})
	if len(one.Data) != 1 || one.Object != "list" || one.Model != "tiny" || one.Data[0].Object != "embedding" {
		t.Fatalf("response %s", one.RawJSON())
	}
	v := one.Data[0].Embedding
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	if len(v) == 0 || math.Abs(norm-1) > 1e-5 {
		t.Errorf("embedding of %d values has squared norm %v, want 1", len(v), norm)
	}
	if one.Usage.PromptTokens == 0 || one.Usage.TotalTokens != one.Usage.PromptTokens {
		t.Errorf("usage %+v", one.Usage)
	}

	batch := embed(t, c, openai.EmbeddingNewParams{Model: "tiny", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a cat", "hello world", "the dog ran"}}})
	if len(batch.Data) != 3 {
		t.Fatalf("%d embeddings for 3 inputs", len(batch.Data))
	}
	for i, d := range batch.Data {
		if int(d.Index) != i {
			t.Errorf("data[%d].index = %d", i, d.Index)
		}
	}
	if cs := cosine(batch.Data[1].Embedding, v); cs < 0.99999 {
		t.Errorf("batched input differs from the same input alone: cosine %v", cs)
	}
	if cs := cosine(batch.Data[0].Embedding, v); cs > 0.99999 {
		t.Errorf("different inputs have the same embedding (cosine %v)", cs)
	}

	b64 := embed(t, c, openai.EmbeddingNewParams{Model: "tiny", EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"hello world", "a cat"}}})
	if len(b64.Data) != 2 {
		t.Fatalf("%d base64 embeddings for 2 inputs", len(b64.Data))
	}
	got := decodeB64(t, b64.Data[0].JSON.Embedding.Raw())
	if len(got) != len(v) {
		t.Fatalf("base64: %d values, float: %d", len(got), len(v))
	}
	for i := range got {
		if math.Abs(got[i]-v[i]) > 1e-6 {
			t.Fatalf("base64 value %d = %v, float %v", i, got[i], v[i])
		}
	}

	ids := embed(t, c, openai.EmbeddingNewParams{Model: "tiny", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: [][]int64{{5, 6, 7}, {8, 9}}}})
	if len(ids.Data) != 2 || ids.Usage.PromptTokens != 5 {
		t.Errorf("token id lists: %d embeddings, usage %+v", len(ids.Data), ids.Usage)
	}

	_, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "tiny", Dimensions: openai.Int(int64(len(v) + 1)),
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}})
	if apiErr, ok := err.(*openai.Error); !ok || apiErr.StatusCode != 400 {
		t.Errorf("dimensions != the model's: %v, want a 400", err)
	}
	same := embed(t, c, openai.EmbeddingNewParams{Model: "tiny", Dimensions: openai.Int(int64(len(v))), Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}})
	if len(same.Data[0].Embedding) != len(v) {
		t.Errorf("dimensions = the model's: %d values", len(same.Data[0].Embedding))
	}
	_, err = c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "tiny", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: []int64{1 << 30}}})
	if apiErr, ok := err.(*openai.Error); !ok || apiErr.StatusCode != 400 {
		t.Errorf("a token id outside the vocabulary: %v, want a 400", err)
	}
}

// embedGolden is a testdata/oracle-embed record
// (scripts/oracle-embed-goldens.sh).
type embedGolden struct {
	Command string `json:"command"`
	Synth   struct {
		Spec   synth.Spec `json:"spec"`
		Type   string     `json:"type"`
		Seed   uint64     `json:"seed"`
		Vocab  string     `json:"vocab"`
		SHA256 string     `json:"sha256"`
	} `json:"synth"`
	Oracle struct {
		Tokens    []int64   `json:"tokens"`
		Embedding []float64 `json:"embedding"`
	} `json:"oracle"`
}

// TestEmbeddingsOracle compares /v1/embeddings with llama.cpp's embedding
// of the same synthetic model and token ids (node-llama-cpp's embedding
// context), by cosine similarity: without pooling_type llama.cpp returns
// the last position's final-norm hidden state (kiln's last pooling); with
// one it pools so, and kiln is served the same pooling.
func TestEmbeddingsOracle(t *testing.T) {
	shared := testutil.SharedModels(t)
	files, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "testdata", "oracle-embed", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedding goldens: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var g embedGolden
			if err := json.Unmarshal(raw, &g); err != nil {
				t.Fatal(err)
			}
			vocab, err := synth.LoadVocab(filepath.Join(shared, g.Synth.Vocab))
			if err != nil {
				t.Fatal(err)
			}
			scheme, err := convert.ParseScheme(g.Synth.Type)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "synth.gguf")
			if err := synth.Write(path, g.Synth.Spec, vocab, scheme, g.Synth.Seed); err != nil {
				t.Fatal(err)
			}
			if got := fileSHA(t, path); got != g.Synth.SHA256 {
				t.Fatalf("regenerated synth model has sha256 %s, golden was made from %s: re-run scripts/oracle-embed-goldens.sh", got, g.Synth.SHA256)
			}
			pooling := server.PoolingFromGGUF(g.Synth.Spec.PoolingType) // as kiln serve reads <arch>.pooling_type
			ts := start(t, server.Config{Models: []server.Source{{Name: "synth", Path: path}}}, &loader{pool: pooling})
			r := embed(t, ts.client(), openai.EmbeddingNewParams{Model: "synth", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: g.Oracle.Tokens}})
			got := r.Data[0].Embedding
			if len(got) != len(g.Oracle.Embedding) {
				t.Fatalf("%d values, llama.cpp %d", len(got), len(g.Oracle.Embedding))
			}
			cs := cosine(got, g.Oracle.Embedding)
			t.Logf("cosine similarity with llama.cpp: %s", strconv.FormatFloat(cs, 'f', 9, 64))
			if cs < 0.999 {
				t.Errorf("cosine similarity with llama.cpp %v < 0.999", cs)
			}
		})
	}
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestEmbeddingsMeanPooling serves a model pooled by mean: a one-token
// input's embedding is its last (only) row's, a longer input's is not,
// and a prefix-cached prompt embeds the same as when first computed (the
// pooled rows bypass the cache).
func TestEmbeddingsMeanPooling(t *testing.T) {
	last := start(t, server.Config{}, nil).client()
	mean := start(t, server.Config{}, &loader{pool: server.PoolMean}).client()
	in := func(ids ...int64) openai.EmbeddingNewParams {
		return openai.EmbeddingNewParams{Model: "tiny", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: ids}}
	}
	a, b := embed(t, last, in(7)).Data[0].Embedding, embed(t, mean, in(7)).Data[0].Embedding
	if cs := cosine(a, b); cs < 0.99999 {
		t.Errorf("one token: mean and last pooling differ (cosine %v)", cs)
	}
	long := make([]int64, 40)
	for i := range long {
		long[i] = int64(5 + i)
	}
	a, b = embed(t, last, in(long...)).Data[0].Embedding, embed(t, mean, in(long...)).Data[0].Embedding
	if cs := cosine(a, b); cs > 0.99999 {
		t.Errorf("40 tokens: mean pooling equals last pooling (cosine %v)", cs)
	}
	again := embed(t, mean, in(long...)).Data[0].Embedding
	if cs := cosine(again, b); cs < 0.999999 {
		t.Errorf("the same input again (prefix cached) embeds differently: cosine %v", cs)
	}
}
