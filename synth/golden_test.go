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
}

// TestOracleGoldensReproduce regenerates every synthetic model behind the
// llama.cpp goldens from its recorded spec, type, seed and vocabulary, and
// checks it is byte-identical to the file llama.cpp ran on: a change to the
// generator that would make the goldens stale fails here.
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
	}
	if n < 20 {
		t.Errorf("only %d synthetic goldens", n)
	}
}
