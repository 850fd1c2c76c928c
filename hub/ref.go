package hub

import (
	"fmt"
	"strings"
)

// Prefix marks a MODEL argument as a Hugging Face hub reference rather than
// a local path.
const Prefix = "hf:"

// Ref names a file on the hub. Exactly one form is set:
//
//	hf:OWNER/REPO/PATH/TO/FILE.gguf   File set, Quant empty
//	hf:OWNER/REPO:QUANT               Quant set (Q4_K_M, q8_0, UD-Q4_K_XL...), File empty
//	hf:OWNER/REPO                     both empty: the default pick (see Pick)
//
// "hf://" is accepted as a spelling of "hf:".
type Ref struct {
	Owner string // user or organisation, e.g. "Qwen"
	Repo  string // repository name, e.g. "Qwen3-0.6B-GGUF"
	File  string // path inside the repository, "/"-separated, never "." or ".." segments
	Quant string // quantization tag, matched case-insensitively against file names
}

// IsRef reports whether a MODEL argument names a hub file (starts with "hf:").
func IsRef(s string) bool { return strings.HasPrefix(s, Prefix) }

// ParseRef parses an "hf:" reference. Bad input gets an error that shows the
// accepted forms.
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return Ref{}, fmt.Errorf("hub: %q is not a hub reference: want hf:OWNER/REPO/FILE.gguf or hf:OWNER/REPO:QUANT", s)
	}
	rest = strings.TrimPrefix(rest, "//")
	owner, after, ok := strings.Cut(rest, "/")
	if !ok {
		return Ref{}, fmt.Errorf("hub: %q: want hf:OWNER/REPO/FILE.gguf or hf:OWNER/REPO:QUANT", s)
	}
	r := Ref{Owner: owner}
	repo, file, hasFile := strings.Cut(after, "/")
	if hasFile {
		r.Repo, r.File = repo, file
		if err := checkFile(file); err != nil {
			return Ref{}, fmt.Errorf("hub: %q: %v", s, err)
		}
	} else {
		var hasQuant bool
		r.Repo, r.Quant, hasQuant = strings.Cut(repo, ":")
		if hasQuant {
			if err := checkQuant(r.Quant); err != nil {
				return Ref{}, fmt.Errorf("hub: %q: %v", s, err)
			}
		}
	}
	if err := checkName("owner", r.Owner); err != nil {
		return Ref{}, fmt.Errorf("hub: %q: %v", s, err)
	}
	if err := checkName("repository", r.Repo); err != nil {
		return Ref{}, fmt.Errorf("hub: %q: %v", s, err)
	}
	return r, nil
}

// String gives the reference back in its canonical "hf:" spelling.
func (r Ref) String() string {
	switch {
	case r.File != "":
		return Prefix + r.Owner + "/" + r.Repo + "/" + r.File
	case r.Quant != "":
		return Prefix + r.Owner + "/" + r.Repo + ":" + r.Quant
	}
	return Prefix + r.Owner + "/" + r.Repo
}

// RepoID is "OWNER/REPO", the hub's repository id.
func (r Ref) RepoID() string { return r.Owner + "/" + r.Repo }

// withFile returns the reference to one file of the same repository.
func (r Ref) withFile(file string) Ref {
	return Ref{Owner: r.Owner, Repo: r.Repo, File: file}
}

// checkName applies the hub's rule for owner and repository names: 1 to 96
// characters of [A-Za-z0-9_.-], starting and ending with a letter, digit or
// '_', without "--" or "..".
func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("empty %s name", what)
	}
	if len(s) > 96 {
		return fmt.Errorf("%s name longer than 96 characters", what)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isWord(c) && c != '-' && c != '.' {
			return fmt.Errorf("%s name %q: character %q not allowed (letters, digits, '_', '-', '.')", what, s, c)
		}
	}
	if !isWord(s[0]) || !isWord(s[len(s)-1]) {
		return fmt.Errorf("%s name %q must start and end with a letter, digit or '_'", what, s)
	}
	if strings.Contains(s, "--") || strings.Contains(s, "..") {
		return fmt.Errorf("%s name %q must not contain \"--\" or \"..\"", what, s)
	}
	return nil
}

// reservedSuffixes are the cache's bookkeeping names beside a model file
// (see doc.go); a hub file with such a name would collide with them.
var reservedSuffixes = []string{".partial", ".partial.json"}

// checkFile accepts a "/"-separated path inside a repository that cannot
// escape the cache directory it is stored under.
func checkFile(p string) error {
	if p == "" {
		return fmt.Errorf("empty file name")
	}
	if len(p) > 1024 {
		return fmt.Errorf("file path longer than 1024 bytes")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return fmt.Errorf("file path %q: character %q not allowed", p, c)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return fmt.Errorf("file path %q: empty segment", p)
		case ".", "..":
			return fmt.Errorf("file path %q: %q segment not allowed", p, seg)
		}
	}
	for _, suf := range reservedSuffixes {
		if strings.HasSuffix(p, suf) {
			return fmt.Errorf("file path %q: names ending in %q are reserved for kiln's cache", p, suf)
		}
	}
	return nil
}

// checkQuant accepts tags like Q4_K_M, q8_0, UD-Q4_K_XL, BF16.
func checkQuant(q string) error {
	if q == "" {
		return fmt.Errorf("empty quantization tag after ':'")
	}
	for i := 0; i < len(q); i++ {
		if c := q[i]; !isWord(c) && c != '-' && c != '.' {
			return fmt.Errorf("quantization tag %q: character %q not allowed", q, c)
		}
	}
	return nil
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
