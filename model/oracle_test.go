package model_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln/convert"
	"kiln/gguf"
	"kiln/internal/testutil"
	"kiln/kernels"
	"kiln/model"
	"kiln/synth"
)

// golden is one testdata/oracle record, written by scripts/oracle-goldens.sh:
// what llama.cpp (shared/oracle) printed for a model, and how to rebuild that
// model bit for bit (kiln synth, then optionally kiln quantize).
type golden struct {
	Command string `json:"command"`
	KVType  string `json:"kv_type"` // the oracle's --kv-type; "" is f16
	Synth   *struct {
		Spec   synth.Spec `json:"spec"`
		Type   string     `json:"type"`
		Seed   uint64     `json:"seed"`
		Vocab  string     `json:"vocab"` // path under shared/models
		SHA256 string     `json:"sha256"`
	} `json:"synth"`
	Quantize *struct {
		From   string `json:"from"` // path under shared/models; "" = the synth model
		Type   string `json:"type"`
		SHA256 string `json:"sha256"`
	} `json:"quantize"`
	Oracle struct {
		Prompt    []int32 `json:"prompt"`
		Tokens    []int32 `json:"tokens"` // greedy records
		Positions []struct {
			Pos int          `json:"pos"`
			Top [][2]float64 `json:"top"`
		} `json:"positions"`
	} `json:"oracle"`
}

// Agreement bounds on max |log p_kiln - log p_llama.cpp| over llama.cpp's
// reported tokens (both renormalised over that set: the oracle reports
// probabilities after its default top-k 40 / top-p 0.95 truncation, or,
// in goldens recorded since 2026-11-28, the full softmax).
//
// Forward computes llama.cpp's CPU arithmetic bit for bit on these 64-token
// prompts: RMSNorm, RoPE with glibc's sincosf, tiled flash attention,
// SwiGLU, residual adds, and the matrix products in the summation orders
// llama.cpp's AVX2 kernels use for each weight type and shape (llamafile
// tinyBLAS for F32/F16/BF16/Q8_0/Q5_0, the repacked 8x8 GEMMs for
// Q4_0/Q4_K, vec_dot for Q2_K/Q3_K/Q4_1/Q5_1/Q5_K/Q6_K and for shapes the others
// decline; internal/llamaorder is the reference, kernels/simd the fast kernels, checked bit for bit),
// and for mixture-of-experts models (qwen3moe-*, mixtral-*) the router's
// softmax and top-k and the experts' mul_mat_id orders (vec_dot for float
// weights, the repacked gemvs for Q4_0 and Q4_K). Their worst, all types:
// qwen3moe 1.07e-7, mixtral 2.74e-7 (Q4_0), qwen2moe 1.16e-7 (F32, Q8_0,
// Q4_K; its shared expert's sigmoid gate as ggml_silu/x), olmoe 1.06e-7
// (F32, Q8_0, Q4_K), inside the dense bounds below
// (with Q4_K experts in the GEMM's order instead of the gemv's, qwen3moe
// was 6.1e-3 off).
// What remains is float noise in the log-softmax and the JSON's printed
// digits. The issue first asked for 1e-3 (F32), 1e-2 (F16, BF16) and 2e-2
// (quantized), which a 1e-4 regression would pass; the bounds are now about
// 5-9x the worst measured over the goldens of the type (llama, llama3rope,
// qwen2, qwen3, and TestKilnConvertOracle's tinystories-656k). Measured on
// an Intel Xeon (family 6 model 207) under KILN_KERNELS=avx512vnni, avx2
// and generic: identical to the last digit, since the kernel sets are
// bit-identical.
var oracleBounds = map[string]struct {
	bound, measured float64
}{
	"F32":    {3e-6, 5.59e-7}, // tinystories-656k; the synth goldens 1.13e-7 (YaRN: qwen2yarn 1.11e-7, qwen3yarn 1.01e-7)
	"F16":    {2e-6, 2.82e-7},
	"BF16":   {2e-6, 2.45e-7},
	"Q8_0":   {3e-6, 5.64e-7}, // tinystories-656k; the synth goldens 2.50e-7
	"Q4_0":   {2e-6, 2.80e-7},
	"Q4_K":   {2e-6, 2.56e-7},
	"Q4_K_M": {2e-6, 2.54e-7}, // made by kiln quantize; llama.cpp ran it
	"Q6_K":   {2e-6, 2.86e-7},
	// llama, qwen3, qwen3moe only; Q4_1, Q5_1 and Q5_K were 0.04-0.14 off
	// before their dots took llama.cpp's AVX2 order.
	"Q4_1":   {1e-6, 1.14e-7},
	"Q5_0":   {2e-6, 2.54e-7},
	"Q5_1":   {1e-6, 1.10e-7},
	"Q5_K":   {2e-6, 3.07e-7},
	"Q5_K_M": {2e-6, 2.91e-7}, // made by kiln quantize; llama.cpp ran it
	// llama, qwen3 and llama's kiln quantize mixes; Q2_K covers the pure
	// synth models and the Q2_K mix (llama-Q2_K-mix, 3.11e-7).
	"Q2_K":   {2e-6, 3.11e-7},
	"Q3_K":   {2e-6, 2.50e-7},
	"Q3_K_S": {2e-6, 2.96e-7}, // made by kiln quantize; llama.cpp ran it
	"Q3_K_M": {2e-6, 3.40e-7}, // likewise
	"Q3_K_L": {2e-6, 2.87e-7}, // likewise
}

// kvBounds bound the goldens recorded with a quantized KV cache
// (kv-<type>-*.json: the oracle's --kv-type over 256-token prompts, where
// llama.cpp runs its one_chunk flash attention for every row, which kiln's
// attention over Q8_0 / Q4_0 pages follows bit for bit), over all weight
// types, and its Walsh-Hadamard rotation of q, k, v and the output, on by
// default in llama.cpp (without the rotation kiln was 0.06-1.9 off). Worst
// measured (llama-F32, position 161 for both): q8_0 2.45e-7, q4_0 2.89e-7;
// the other weight types about 1.1e-7.
var kvBounds = map[kernels.KVType]struct {
	bound, measured float64
}{
	kernels.KVQ8_0: {2e-6, 2.45e-7},
	kernels.KVQ4_0: {2e-6, 2.89e-7},
}

// shortPromptBounds bound goldens whose prompt is shorter than 64 tokens:
// llama.cpp then runs its one_chunk flash attention, which rounds q to F16
// and keeps the output accumulator in F16, while kiln always follows the
// tiled path (batch invariance). The gap is that fixed rounding, not noise
// (the same value under every kernel set), so the margin is small: it only
// has to absorb re-recorded goldens. Measured: stories260K-probs (F32, 17
// tokens) 2.32e-3, stories260K-F16-probs (17 tokens) 2.86e-3.
var shortPromptBounds = map[string]float64{
	"F32": 3e-3,
	"F16": 4e-3,
}

// bound returns the agreement bound for a golden of weight type typ whose
// prompt has n tokens.
func bound(t *testing.T, typ string, n int) float64 {
	b, ok := oracleBounds[typ]
	if !ok {
		t.Fatalf("no agreement bound for type %s", typ)
	}
	if n < 64 {
		sb, ok := shortPromptBounds[typ]
		if !ok {
			t.Fatalf("no short-prompt agreement bound for type %s (measure one)", typ)
		}
		return sb
	}
	return b.bound
}

func sha(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// rebuild makes the model a golden record describes and checks its hash, so
// a changed generator or quantizer fails loudly instead of comparing
// against a different model.
func rebuild(t *testing.T, g *golden, shared, dir string) (path, typ string) {
	t.Helper()
	switch {
	case g.Synth != nil:
		vocab, err := synth.LoadVocab(filepath.Join(shared, g.Synth.Vocab))
		if err != nil {
			t.Fatal(err)
		}
		scheme, err := convert.ParseScheme(g.Synth.Type)
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(dir, "synth.gguf")
		if err := synth.Write(path, g.Synth.Spec, vocab, scheme, g.Synth.Seed); err != nil {
			t.Fatal(err)
		}
		if got := sha(t, path); got != g.Synth.SHA256 {
			t.Fatalf("regenerated synth model has sha256 %s, golden was made from %s: re-run scripts/oracle-goldens.sh", got, g.Synth.SHA256)
		}
		typ = g.Synth.Type
	case g.Quantize != nil && g.Quantize.From != "":
		path = filepath.Join(shared, g.Quantize.From)
	default:
		return filepath.Join(shared, "stories260K.gguf"), "F32"
	}
	if q := g.Quantize; q != nil {
		// As `kiln quantize` (which made the golden) reads its TYPE:
		// llama-quantize's file types, where Q2_K is the Q2_K mix, not
		// ParseScheme's pure tensor type.
		ft, err := convert.ParseFileType(q.Type)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "quantized.gguf")
		if _, err := convert.Convert(path, out, convert.Options{Scheme: convert.Scheme{FileType: ft}}); err != nil {
			t.Fatal(err)
		}
		if got := sha(t, out); got != q.SHA256 {
			t.Fatalf("re-quantized model has sha256 %s, golden was made from %s", got, q.SHA256)
		}
		path, typ = out, q.Type
	}
	return path, typ
}

// TestOracleAgreement compares kiln's next-token distributions with
// llama.cpp's recorded ones for every golden in testdata/oracle.
func TestOracleAgreement(t *testing.T) {
	shared := testutil.SharedModels(t)
	files, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "testdata", "oracle", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var g golden
			if err := json.Unmarshal(raw, &g); err != nil {
				t.Fatal(err)
			}
			path, typ := rebuild(t, &g, shared, t.TempDir())
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := model.Load(f, model.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if len(g.Oracle.Tokens) > 0 {
				checkGreedy(t, m, &g)
				return
			}
			if g.KVType != "" {
				kvt, err := kernels.ParseKVType(g.KVType)
				if err != nil {
					t.Fatal(err)
				}
				b, ok := kvBounds[kvt]
				if !ok {
					t.Fatalf("no agreement bound for KV type %s", kvt)
				}
				checkProbsKV(t, m, &g, kvt, b.bound)
				return
			}
			checkProbs(t, m, &g, bound(t, typ, len(g.Oracle.Prompt)))
		})
	}
}

func checkProbs(t *testing.T, m *model.Model, g *golden, tol float64) {
	checkProbsKV(t, m, g, kernels.KVF16, tol)
}

// checkProbsKV is checkProbs with the KV cache stored as kvt.
func checkProbsKV(t *testing.T, m *model.Model, g *golden, kvt kernels.KVType, tol float64) {
	prompt := g.Oracle.Prompt
	r := newRunnerKV(t, m, len(prompt), 16, kvt)
	rows := r.feed(prompt...)
	worst, at := 0.0, -1
	for _, p := range g.Oracle.Positions {
		logp := logSoftmaxOver(rows[p.Pos], p.Top)
		ref := 0.0
		for _, e := range p.Top {
			ref += e[1]
		}
		for i, e := range p.Top {
			d := math.Abs(logp[i] - math.Log(e[1]/ref))
			if d > worst {
				worst, at = d, p.Pos
			}
		}
	}
	t.Logf("max |log p_kiln - log p_llama.cpp| = %.2e (position %d), bound %.0e", worst, at, tol)
	if worst > tol {
		t.Errorf("max |log p_kiln - log p_llama.cpp| = %.3g at position %d exceeds %.0e", worst, at, tol)
	}
}

// logSoftmaxOver returns log-probabilities of the listed token ids,
// renormalised over just those ids.
func logSoftmaxOver(logits []float32, top [][2]float64) []float64 {
	mx := math.Inf(-1)
	for _, e := range top {
		mx = math.Max(mx, float64(logits[int(e[0])]))
	}
	sum := 0.0
	for _, e := range top {
		sum += math.Exp(float64(logits[int(e[0])]) - mx)
	}
	out := make([]float64, len(top))
	for i, e := range top {
		out[i] = float64(logits[int(e[0])]) - mx - math.Log(sum)
	}
	return out
}

func checkGreedy(t *testing.T, m *model.Model, g *golden) {
	prompt := g.Oracle.Prompt
	want := g.Oracle.Tokens
	r := newRunner(t, m, len(prompt)+len(want), false)
	rows := r.feed(prompt...)
	next := argmax(rows[len(rows)-1])
	for i, w := range want {
		if next != w {
			t.Fatalf("greedy token %d: kiln %d, llama.cpp %d", i, next, w)
		}
		next = argmax(r.feed(next)[0])
	}
}
