package benchserve

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRandomDataset(t *testing.T) {
	ids := TokenRange{Lo: 100, Hi: 200}
	reqs, err := RandomDataset(50, 32, 8, 0, ids, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		if len(r.PromptIDs) != 32 || r.PromptLen != 32 || r.OutputLen != 8 || r.Text != "" {
			t.Fatalf("request %d: %d ids, len %d, out %d", i, len(r.PromptIDs), r.PromptLen, r.OutputLen)
		}
		for _, id := range r.PromptIDs {
			if id < 100 || id >= 200 {
				t.Fatalf("request %d: id %d outside [100, 200)", i, id)
			}
		}
	}
	again, _ := RandomDataset(50, 32, 8, 0, ids, 1)
	other, _ := RandomDataset(50, 32, 8, 0, ids, 2)
	if !reflect.DeepEqual(reqs, again) || reflect.DeepEqual(reqs, other) {
		t.Fatal("the dataset must follow the seed")
	}
	ranged, _ := RandomDataset(400, 100, 10, 0.5, ids, 1)
	minIn, maxIn, minOut, maxOut := 1<<30, 0, 1<<30, 0
	for _, r := range ranged {
		minIn, maxIn = min(minIn, r.PromptLen), max(maxIn, r.PromptLen)
		minOut, maxOut = min(minOut, r.OutputLen), max(maxOut, r.OutputLen)
	}
	if minIn < 50 || maxIn > 150 || minOut < 5 || maxOut > 15 || maxIn-minIn < 80 {
		t.Fatalf("ratio 0.5: inputs in [%d, %d], outputs in [%d, %d]; want [50, 150] and [5, 15], spread", minIn, maxIn, minOut, maxOut)
	}
	for _, bad := range []struct {
		n, in, out int
		ratio      float64
	}{{0, 1, 1, 0}, {1, 0, 1, 0}, {1, 1, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, -0.1}} {
		if _, err := RandomDataset(bad.n, bad.in, bad.out, bad.ratio, ids, 1); err == nil {
			t.Errorf("RandomDataset%v: no error", bad)
		}
	}
	if r, err := VocabRange(512); err != nil || r != (TokenRange{100, 512}) {
		t.Errorf("VocabRange(512) = %v, %v", r, err)
	}
	if r, _ := VocabRange(40); r != (TokenRange{10, 40}) {
		t.Errorf("VocabRange(40) = %v", r)
	}
	if _, err := VocabRange(1); err == nil {
		t.Error("VocabRange(1): no error")
	}
}

func TestPrefixRepetitionDataset(t *testing.T) {
	reqs, err := PrefixRepetitionDataset(12, 16, 4, 3, 5, TokenRange{0, 1000}, 9)
	if err != nil {
		t.Fatal(err)
	}
	prefixes := map[string]int{}
	for i, r := range reqs {
		if len(r.PromptIDs) != 20 || r.PromptLen != 20 || r.OutputLen != 5 {
			t.Fatalf("request %d: %d ids, out %d", i, len(r.PromptIDs), r.OutputLen)
		}
		prefixes[fmt.Sprint(r.PromptIDs[:16])]++
	}
	if len(prefixes) != 3 {
		t.Fatalf("%d distinct prefixes, want 3", len(prefixes))
	}
	for p, n := range prefixes {
		if n != 4 {
			t.Errorf("prefix %s used %d times, want 4", p, n)
		}
	}
	if _, err := PrefixRepetitionDataset(2, 16, 4, 3, 5, TokenRange{0, 1000}, 9); err == nil {
		t.Error("more prefixes than prompts: no error")
	}
}

const shareGPTSample = `[
 {"id":"a","conversations":[{"from":"human","value":"Write a poem about the sea and the sky."},{"from":"gpt","value":"` + "The sea is wide and the sky is high, and that is all I have to say about it." + `"}]},
 {"id":"b","conversations":[{"from":"system","value":"be brief"},{"from":"user","value":"What is the capital of France, please?"},{"from":"assistant","value":"Paris is the capital of France."}]},
 {"id":"short","conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"Hello! How can I help you today?"}]},
 {"id":"no reply","conversations":[{"from":"human","value":"Is anybody there? Hello hello hello."}]},
 {"id":"empty","conversations":[]},
 {"id":"gpt first","conversations":[{"from":"gpt","value":"I speak first, which is odd."}]}
]`

func TestParseShareGPT(t *testing.T) {
	reqs, err := ParseShareGPT(strings.NewReader(shareGPTSample), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d usable conversations, want 2: %+v", len(reqs), reqs)
	}
	if r := reqs[0]; r.Text != "Write a poem about the sea and the sky." || r.PromptLen != len(r.Text)/4 || r.OutputLen != 77/4 || r.PromptIDs != nil {
		t.Errorf("first: %+v", r)
	}
	if r := reqs[1]; r.Text != "What is the capital of France, please?" || r.OutputLen != len("Paris is the capital of France.")/4 {
		t.Errorf("second (user/assistant, after a system turn): %+v", r)
	}
	fixed, _ := ParseShareGPT(strings.NewReader(shareGPTSample), 50)
	if len(fixed) != 3 || fixed[2].OutputLen != 50 { // "no reply" is usable with a fixed length
		t.Errorf("with --sharegpt-output-len 50: %+v", fixed)
	}
	long := `[{"conversations":[{"from":"human","value":"a long question here"},{"from":"gpt","value":"` + strings.Repeat("word ", 2000) + `"}]}]`
	if r, _ := ParseShareGPT(strings.NewReader(long), 0); len(r) != 1 || r[0].OutputLen != MaxShareGPTOutput {
		t.Errorf("long reply: %+v, want output capped at %d", r, MaxShareGPTOutput)
	}
	for _, bad := range []string{``, `{}`, `[{"conversations":[`, `[{"conversations":"x"}]`, `[] []`, `[1]`} {
		if _, err := ParseShareGPT(strings.NewReader(bad), 0); err == nil {
			t.Errorf("ParseShareGPT(%q): no error", bad)
		}
	}
}

func TestShareGPTDataset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sg.json")
	if err := os.WriteFile(path, []byte(shareGPTSample), 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, err := ShareGPTDataset(path, 2, 0, 1)
	if err != nil || len(reqs) != 2 {
		t.Fatalf("%v, %v", reqs, err)
	}
	if _, err := ShareGPTDataset(path, 3, 0, 1); err == nil || !strings.Contains(err.Error(), "2 usable conversations, fewer than --num-prompts 3") {
		t.Fatalf("too few: %v", err)
	}
	if _, err := ShareGPTDataset(filepath.Join(t.TempDir(), "none.json"), 1, 0, 1); err == nil {
		t.Fatal("missing file: no error")
	}
}
