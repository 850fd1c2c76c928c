package hub

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// defaultQuants are tried in order for a reference without a tag, as
// llama.cpp's -hf does before it falls back to the only model file.
var defaultQuants = []string{"Q4_K_M", "Q8_0"}

// splitRE matches the shard suffix of a split GGUF:
// name-00001-of-00003.gguf -> groups "00001", "00003".
var splitRE = regexp.MustCompile(`(?i)-(\d{5})-of-(\d{5})\.gguf$`)

// Pick chooses the model file a quantization tag names among a repository's
// files. quant "" means the default: Q4_K_M, then Q8_0, then the only model
// file. Only .gguf files count, without projectors and importance matrices
// (names containing "mmproj" or "imatrix"). The tag matches when it appears
// in the path, case-insensitively, as a whole token: preceded by the start
// or a character other than a letter or digit, followed by the end or a
// character other than a letter, digit or '_' (so Q4_K does not match
// Q4_K_M, nor Q4_0 IQ4_0). The shards of a split model count as one file.
// No match, two matches, or a split model are errors that list what the
// repository has; what is returned is always a whole single-file model.
func Pick(files []RepoFile, quant string) (RepoFile, error) {
	var models []RepoFile
	for _, f := range files {
		if isModelFile(f.Path) {
			models = append(models, f)
		}
	}
	if len(models) == 0 {
		return RepoFile{}, fmt.Errorf("no .gguf model files in the repository%s", listing("files there", pathsOf(files)))
	}
	if quant != "" {
		return pickTag(models, quant)
	}
	for _, q := range defaultQuants {
		if groupsMatching(models, q) > 0 {
			return pickTag(models, q)
		}
	}
	groups := groupModels(models)
	if len(groups) == 1 {
		return single(groups[0])
	}
	return RepoFile{}, fmt.Errorf("%d model files and none is %s: add :QUANT or /FILE to the reference%s",
		len(groups), strings.Join(defaultQuants, " or "), listing("model files", groupNames(groups)))
}

func pickTag(models []RepoFile, quant string) (RepoFile, error) {
	var matched []RepoFile
	for _, f := range models {
		if matchTag(f.Path, quant) {
			matched = append(matched, f)
		}
	}
	groups := groupModels(matched)
	switch len(groups) {
	case 0:
		return RepoFile{}, fmt.Errorf("no model file with quantization %q%s", quant, listing("model files", groupNames(groupModels(models))))
	case 1:
		return single(groups[0])
	}
	return RepoFile{}, fmt.Errorf("quantization %q is ambiguous: name the file with hf:OWNER/REPO/FILE%s", quant, listing("matching files", groupNames(groups)))
}

func groupsMatching(models []RepoFile, quant string) int {
	var matched []RepoFile
	for _, f := range models {
		if matchTag(f.Path, quant) {
			matched = append(matched, f)
		}
	}
	return len(groupModels(matched))
}

// single returns the file of a one-file group and refuses split models.
func single(g []RepoFile) (RepoFile, error) {
	if len(g) == 1 && splitRE.FindStringSubmatch(g[0].Path) == nil {
		return g[0], nil
	}
	return RepoFile{}, fmt.Errorf("%s is split into %d files; kiln does not load split GGUF models yet (merge them with llama-gguf-split --merge, or pick another quantization)", groupName(g), splitCount(g))
}

func splitCount(g []RepoFile) int {
	if m := splitRE.FindStringSubmatch(g[0].Path); m != nil {
		n, _ := strconv.Atoi(m[2])
		return n
	}
	return len(g)
}

// isModelFile: a .gguf file that is a language model, not a vision
// projector or an importance matrix.
func isModelFile(path string) bool {
	lower := strings.ToLower(path)
	base := lower[strings.LastIndexByte(lower, '/')+1:]
	return strings.HasSuffix(lower, ".gguf") && !strings.Contains(base, "mmproj") && !strings.Contains(base, "imatrix")
}

// matchTag reports whether tag occurs in path as a whole token (see Pick).
func matchTag(path, tag string) bool {
	if tag == "" {
		return false
	}
	p, t := strings.ToUpper(path), strings.ToUpper(tag)
	for from := 0; ; {
		i := strings.Index(p[from:], t)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(t)
		leftOK := i == 0 || !isAlnum(p[i-1])
		rightOK := end == len(p) || !isWord(p[end])
		if leftOK && rightOK {
			return true
		}
		from = i + 1
	}
}

func isAlnum(c byte) bool { return isWord(c) && c != '_' }

// groupModels puts the shards of a split model together (key: the path
// without -0000N-of-0000M.gguf), in path order.
func groupModels(files []RepoFile) [][]RepoFile {
	byKey := map[string][]RepoFile{}
	var keys []string
	for _, f := range files {
		key := f.Path
		if loc := splitRE.FindStringIndex(f.Path); loc != nil {
			key = f.Path[:loc[0]] + "-*" + splitRE.FindStringSubmatch(f.Path)[2]
		}
		if _, ok := byKey[key]; !ok {
			keys = append(keys, key)
		}
		byKey[key] = append(byKey[key], f)
	}
	sort.Strings(keys)
	groups := make([][]RepoFile, len(keys))
	for i, k := range keys {
		g := byKey[k]
		sort.Slice(g, func(a, b int) bool { return g[a].Path < g[b].Path })
		groups[i] = g
	}
	return groups
}

// groupName is a model's file, or its first shard with the shard count.
func groupName(g []RepoFile) string {
	if len(g) == 1 && splitRE.FindStringSubmatch(g[0].Path) == nil {
		return g[0].Path
	}
	return fmt.Sprintf("%s (split, %d files)", g[0].Path, splitCount(g))
}

func groupNames(groups [][]RepoFile) []string {
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = groupName(g)
	}
	return names
}

func pathsOf(files []RepoFile) []string {
	p := make([]string, len(files))
	for i, f := range files {
		p[i] = f.Path
	}
	sort.Strings(p)
	return p
}

// listing formats names for an error message, one per line, at most 40.
func listing(what string, names []string) string {
	if len(names) == 0 {
		return " (the repository is empty)"
	}
	const max = 40
	var b strings.Builder
	fmt.Fprintf(&b, "; %s:", what)
	for i, n := range names {
		if i == max {
			fmt.Fprintf(&b, "\n  ... and %d more", len(names)-max)
			break
		}
		b.WriteString("\n  " + n)
	}
	return b.String()
}
