package hub

import (
	"strings"
	"testing"
)

func TestMatchTag(t *testing.T) {
	tests := []struct {
		path, tag string
		want      bool
	}{
		{"Qwen3-0.6B-Q4_K_M.gguf", "Q4_K_M", true},
		{"qwen2.5-0.5b-instruct-q4_k_m.gguf", "Q4_K_M", true},
		{"llama-2-7b.Q4_K_M.gguf", "q4_k_m", true},
		{"model_Q8_0.gguf", "Q8_0", true},
		{"Q8_0/model-00001-of-00002.gguf", "Q8_0", true},
		{"x-Q4_K_M.gguf", "Q4_K", false},
		{"x-Q4_K_S.gguf", "Q4_K", false},
		{"x-Q4_K.gguf", "Q4_K", true},
		{"x-IQ4_XS.gguf", "Q4_XS", false},
		{"x-IQ4_XS.gguf", "IQ4_XS", true},
		{"x-BF16.gguf", "F16", false},
		{"x-F16.gguf", "F16", true},
		{"x-UD-Q4_K_XL.gguf", "Q4_K_XL", true},
		{"x-UD-Q4_K_XL.gguf", "UD-Q4_K_XL", true},
		{"x-Q4_K_M.gguf", "", false},
		{"Q4_K_M", "Q4_K_M", true},
		{"aQ4_K_M-Q4_K_M.gguf", "Q4_K_M", true}, // the second occurrence is a token
	}
	for _, tt := range tests {
		if got := matchTag(tt.path, tt.tag); got != tt.want {
			t.Errorf("matchTag(%q, %q) = %v", tt.path, tt.tag, got)
		}
	}
}

func TestPick(t *testing.T) {
	files := func(paths ...string) []RepoFile {
		out := make([]RepoFile, len(paths))
		for i, p := range paths {
			out[i] = RepoFile{Path: p, Size: int64(i)}
		}
		return out
	}
	repo := files("README.md", "m-Q4_K_M.gguf", "m-Q4_K_S.gguf", "m-Q8_0.gguf", "mmproj-m-Q8_0.gguf", "m-imatrix.gguf",
		"F16/m-F16-00001-of-00002.gguf", "F16/m-F16-00002-of-00002.gguf")
	tests := []struct {
		name  string
		files []RepoFile
		quant string
		want  string
		err   []string
	}{
		{name: "exact tag", files: repo, quant: "Q4_K_S", want: "m-Q4_K_S.gguf"},
		{name: "lower case", files: repo, quant: "q8_0", want: "m-Q8_0.gguf"},
		{name: "default Q4_K_M", files: repo, want: "m-Q4_K_M.gguf"},
		{name: "default falls to Q8_0", files: files("m-Q8_0.gguf", "m-Q6_K.gguf"), want: "m-Q8_0.gguf"},
		{name: "default: the only model", files: files("m-Q6_K.gguf", "mmproj-m-F16.gguf", "a.txt"), want: "m-Q6_K.gguf"},
		{name: "tag missing", files: repo, quant: "Q5_K_M", err: []string{`no model file with quantization "Q5_K_M"`, "m-Q4_K_M.gguf", "m-Q8_0.gguf", "F16/m-F16-00001-of-00002.gguf (split, 2 files)"}},
		{name: "projector never picked", files: files("mmproj-m-Q8_0.gguf", "m-Q4_0.gguf"), quant: "Q8_0", err: []string{"no model file"}},
		{name: "split refused", files: repo, quant: "F16", err: []string{"split into 2 files", "llama-gguf-split --merge"}},
		{name: "ambiguous", files: files("a-Q4_0.gguf", "b-Q4_0.gguf"), quant: "Q4_0", err: []string{"ambiguous", "a-Q4_0.gguf", "b-Q4_0.gguf"}},
		{name: "default ambiguous", files: files("a-Q4_K_M.gguf", "b-Q4_K_M.gguf"), err: []string{"ambiguous"}},
		{name: "default, several and no default tag", files: files("a-Q6_K.gguf", "a-Q5_0.gguf"), err: []string{"2 model files and none is Q4_K_M or Q8_0", "a-Q5_0.gguf", "a-Q6_K.gguf"}},
		{name: "no gguf", files: files("README.md", "model.safetensors"), err: []string{"no .gguf model files", "model.safetensors"}},
		{name: "empty repository", files: nil, err: []string{"the repository is empty"}},
	}
	for _, tt := range tests {
		got, err := Pick(tt.files, tt.quant)
		if tt.err == nil {
			if err != nil || got.Path != tt.want {
				t.Errorf("%s: Pick = %q, %v; want %q", tt.name, got.Path, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: Pick = %q, want an error", tt.name, got.Path)
			continue
		}
		for _, w := range tt.err {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tt.name, err, w)
			}
		}
	}
}

func TestListingIsBounded(t *testing.T) {
	names := make([]string, 100)
	for i := range names {
		names[i] = "f.gguf"
	}
	s := listing("files", names)
	if !strings.Contains(s, "... and 60 more") || strings.Count(s, "\n") != 41 {
		t.Errorf("listing of 100 names: %q", s)
	}
}
