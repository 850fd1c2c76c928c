package chat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// goldenCases mirrors testdata/cases.json, the input of gen_golden.py.
type goldenCases struct {
	Conversations map[string][]struct{ Role, Content string }
	Cases         []struct {
		Name, Template, Conversation string
		Bos, Eos, Now                string
		AddGenerationPrompt          bool `json:"add_generation_prompt"`
		Vars                         map[string]json.RawMessage
	}
}

// TestGolden renders every case of testdata/cases.json and compares with
// the rendering Python's Jinja2 made under transformers' settings
// (testdata/golden/<name>.txt), byte for byte; a .err golden holds the
// message the template's raise_exception must produce.
func TestGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var gc goldenCases
	if err := json.Unmarshal(raw, &gc); err != nil {
		t.Fatal(err)
	}
	if len(gc.Cases) < 30 {
		t.Fatalf("only %d golden cases read", len(gc.Cases))
	}
	for _, c := range gc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata/templates", c.Template))
			if err != nil {
				t.Fatal(err)
			}
			conv, ok := gc.Conversations[c.Conversation]
			if !ok {
				t.Fatalf("no conversation %q", c.Conversation)
			}
			var msgs []Message
			for _, m := range conv {
				msgs = append(msgs, Message{Role: m.Role, Content: m.Content})
			}
			now := time.Date(2024, 7, 26, 12, 0, 0, 0, time.UTC)
			if c.Now != "" {
				if now, err = time.Parse("2006-01-02T15:04:05", c.Now); err != nil {
					t.Fatal(err)
				}
			}
			opts := Options{AddGenerationPrompt: c.AddGenerationPrompt, BOS: c.Bos, EOS: c.Eos, Now: now, Vars: map[string]any{}}
			for k, v := range c.Vars {
				opts.Vars[k] = v
			}
			got, err := Render(string(src), msgs, opts)

			base := filepath.Join("testdata/golden", c.Name)
			if want, rerr := os.ReadFile(base + ".err"); rerr == nil {
				var ex *ExceptionError
				if !errors.As(err, &ex) || ex.Message != string(want) {
					t.Fatalf("want raise_exception(%q), got %q, %v", want, got, err)
				}
				return
			}
			want, rerr := os.ReadFile(base + ".txt")
			if rerr != nil {
				t.Fatal(rerr)
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got != string(want) {
				t.Errorf("rendering differs from Jinja2's\n got: %q\nwant: %q", got, want)
			}
		})
	}
}
