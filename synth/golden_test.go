package synth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"kiln/convert"
	"kiln/internal/testutil"
)

// golden is the part of testdata/oracle/*.json that says how the model was
// made (scripts/oracle-goldens.sh writes it).
type golden struct {
	Synth *struct {
		Spec   Spec   `json:"spec"`
		Type   string `json:"type"`
		Seed   uint64 `json:"seed"`
		Vocab  string `json:"vocab"` // relative to shared/models
		Bytes  int64  `json:"bytes"`
		SHA256 string `json:"sha256"`
	} `json:"synth"`
	Quantize *struct {
		From   string `json:"from"` // relative to shared/models; "" means the synth model
		Type   string `json:"type"`
		SHA256 string `json:"sha256"`
	} `json:"quantize"`
}

// fileSHA256 is the hex SHA-256 of a file.
func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// checkQuantized converts in as the golden's quantize record says and
// compares the result's SHA-256.
func checkQuantized(t *testing.T, name, in string, g *golden) {
	t.Helper()
	ft, err := convert.ParseFileType(g.Quantize.Type)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := filepath.Join(t.TempDir(), "q.gguf")
	if _, err := convert.Convert(in, out, convert.Options{Scheme: convert.Scheme{FileType: ft}}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got := fileSHA256(t, out); got != g.Quantize.SHA256 {
		t.Errorf("%s: kiln quantize %s gave sha256 %s, the golden's model had %s: rerun scripts/oracle-goldens.sh", name, g.Quantize.Type, got, g.Quantize.SHA256)
	}
}

// TestOracleGoldensReproduce regenerates every synthetic model behind the
// llama.cpp goldens from its recorded spec, type, seed and vocabulary (and
// puts it through kiln quantize where the golden did), and checks it is
// byte-identical to the file llama.cpp ran on: a change to the generator or
// the converter that would make the goldens stale fails here.
func TestOracleGoldensReproduce(t *testing.T) {
	models := testutil.SharedModels(t)
	files, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "testdata", "oracle", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens found: %v", err)
	}
	vocabs := map[string]*Vocab{}
	n := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var g golden
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if g.Synth == nil {
			if g.Quantize != nil && g.Quantize.From != "" {
				checkQuantized(t, filepath.Base(file), filepath.Join(models, g.Quantize.From), &g)
			}
			continue
		}
		n++
		s := g.Synth
		name := filepath.Base(file)
		if testing.Short() && s.Spec.VocabSize > 10000 && s.Type[0] == 'Q' && s.Type != "Q8_0" && s.Type != "Q4_0" {
			continue // the slow K quantizers over a 50k-token embedding
		}
		v, ok := vocabs[s.Vocab]
		if !ok {
			if v, err = LoadVocab(filepath.Join(models, s.Vocab)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			vocabs[s.Vocab] = v
		}
		sc, err := convert.ParseScheme(s.Type)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, err := Plan(s.Spec, v, sc, s.Seed)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h := sha256.New()
		size, err := m.WriteTo(h)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != s.SHA256 || size != s.Bytes {
			t.Errorf("%s: regenerated %d bytes with sha256 %s, the golden's model had %d bytes, %s: rerun scripts/oracle-goldens.sh", name, size, got, s.Bytes, s.SHA256)
		}
		if g.Quantize != nil {
			path := filepath.Join(t.TempDir(), "synth.gguf")
			if err := m.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			checkQuantized(t, name, path, &g)
		}
	}
	if n < 20 {
		t.Errorf("only %d synthetic goldens", n)
	}
}
