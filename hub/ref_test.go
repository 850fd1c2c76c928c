package hub

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in   string
		want Ref
		err  string // substring of the error; "" for success
	}{
		{in: "hf:Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf", want: Ref{Owner: "Qwen", Repo: "Qwen3-0.6B-GGUF", File: "Qwen3-0.6B-Q8_0.gguf"}},
		{in: "hf://Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf", want: Ref{Owner: "Qwen", Repo: "Qwen3-0.6B-GGUF", File: "Qwen3-0.6B-Q8_0.gguf"}},
		{in: "hf:unsloth/Qwen3-30B-A3B-GGUF/BF16/Qwen3-30B-A3B-BF16-00001-of-00002.gguf", want: Ref{Owner: "unsloth", Repo: "Qwen3-30B-A3B-GGUF", File: "BF16/Qwen3-30B-A3B-BF16-00001-of-00002.gguf"}},
		{in: "hf:bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M", want: Ref{Owner: "bartowski", Repo: "Llama-3.2-1B-Instruct-GGUF", Quant: "Q4_K_M"}},
		{in: "hf:unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL", want: Ref{Owner: "unsloth", Repo: "Qwen3-8B-GGUF", Quant: "UD-Q4_K_XL"}},
		{in: "hf:ggml-org/models", want: Ref{Owner: "ggml-org", Repo: "models"}},
		{in: "hf:a/b/c:d.gguf", want: Ref{Owner: "a", Repo: "b", File: "c:d.gguf"}},
		{in: "hf:_x_/y_", want: Ref{Owner: "_x_", Repo: "y_"}},

		{in: "Qwen/Qwen3", err: "not a hub reference"},
		{in: "hf:", err: "want hf:OWNER/REPO"},
		{in: "hf:Qwen", err: "want hf:OWNER/REPO"},
		{in: "hf:/repo", err: "empty owner"},
		{in: "hf:o/", err: "empty repository"},
		{in: "hf:o/r/", err: "empty file"},
		{in: "hf:o/r:", err: "empty quantization tag"},
		{in: "hf:o/r:Q4 K", err: "quantization tag"},
		{in: "hf:o/r:Q4/x", err: "repository name"},
		{in: "hf:o/r//x.gguf", err: "empty"},
		{in: "hf:o/r/a/../../x.gguf", err: `".." segment`},
		{in: "hf:o/r/./x.gguf", err: `"." segment`},
		{in: "hf:o/r/x.gguf/", err: "segment"},
		{in: `hf:o/r/a\x.gguf`, err: "not allowed"},
		{in: "hf:o/r/x\n.gguf", err: "not allowed"},
		{in: "hf:o/r/x.gguf.partial", err: "reserved"},
		{in: "hf:o/r/x.gguf.partial.json", err: "reserved"},
		{in: "hf:-o/r", err: "start and end"},
		{in: "hf:o/r.", err: "start and end"},
		{in: "hf:o--o/r", err: `"--"`},
		{in: "hf:o/r..s", err: `".."`},
		{in: "hf:o/r s", err: "not allowed"},
		{in: "hf:o/" + strings.Repeat("r", 97), err: "longer than 96"},
		{in: "hf:../r/x.gguf", err: "owner name"},
	}
	for _, tt := range tests {
		got, err := ParseRef(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "hub: ") {
				t.Errorf("ParseRef(%q) = %+v, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		// String is canonical: it parses back to the same reference.
		again, err := ParseRef(got.String())
		if err != nil || again != got {
			t.Errorf("ParseRef(%q).String() = %q does not round-trip: %+v, %v", tt.in, got.String(), again, err)
		}
	}
}

func TestIsRef(t *testing.T) {
	for s, want := range map[string]bool{"hf:a/b": true, "hf://a/b": true, "./hf:a": false, "model.gguf": false, "HF:a/b": false} {
		if IsRef(s) != want {
			t.Errorf("IsRef(%q) = %v", s, !want)
		}
	}
}

// FuzzParseRef: no panic; an accepted reference round-trips through
// String and names a file path that cannot leave its directory.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"hf:o/r/x.gguf", "hf:o/r:Q4_K_M", "hf://o/r", "hf:o/r/a/b/../c", "hf:o/r/x.partial", "hf:a-b.c/d_e:UD-Q4_K_XL"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		again, err := ParseRef(r.String())
		if err != nil || again != r {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, r, r.String(), again, err)
		}
		if r.File != "" && r.Quant != "" {
			t.Fatalf("%q: both File and Quant set", s)
		}
		for _, seg := range strings.Split(r.Owner+"/"+r.Repo+"/"+r.File, "/") {
			if seg == ".." || seg == "." {
				t.Fatalf("%q: %q segment accepted", s, seg)
			}
		}
		if strings.ContainsAny(r.File, "\\\x00") {
			t.Fatalf("%q: file %q", s, r.File)
		}
	})
}
