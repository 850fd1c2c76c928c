package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// IndexName is the file that maps each tensor of a sharded checkpoint to
// the shard holding it.
const IndexName = "model.safetensors.index.json"

// SingleName is the file of an unsharded checkpoint.
const SingleName = "model.safetensors"

// Set is the tensors of a checkpoint folder: one file, or the shards an
// index names. Tensor names are unique across the set.
type Set struct {
	Dir   string
	Files []*File // sorted by path
	where map[string]*File
}

// OpenDir opens the checkpoint in dir: model.safetensors.index.json and
// every shard it names when the index exists, else model.safetensors.
// Each tensor the index names must be in the shard it says; a tensor in two
// shards is an error.
func OpenDir(dir string) (*Set, error) {
	idx := filepath.Join(dir, IndexName)
	b, err := os.ReadFile(idx)
	switch {
	case err == nil:
		return openIndex(dir, idx, b)
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	single := filepath.Join(dir, SingleName)
	if _, err := os.Stat(single); err != nil {
		return nil, fmt.Errorf("safetensors: %s has neither %s nor %s", dir, SingleName, IndexName)
	}
	f, err := Open(single)
	if err != nil {
		return nil, err
	}
	s := &Set{Dir: dir, Files: []*File{f}, where: map[string]*File{}}
	for i := range f.Tensors {
		s.where[f.Tensors[i].Name] = f
	}
	return s, nil
}

func openIndex(dir, idx string, b []byte) (*Set, error) {
	var ix struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, &Error{Path: idx, Msg: fmt.Sprintf("not a JSON index: %v", err)}
	}
	if len(ix.WeightMap) == 0 {
		return nil, &Error{Path: idx, Msg: "weight_map is missing or empty"}
	}
	shards := map[string]*File{}
	s := &Set{Dir: dir, where: map[string]*File{}}
	fail := func(err error) (*Set, error) { s.Close(); return nil, err }
	names := make([]string, 0, len(ix.WeightMap))
	for name := range ix.WeightMap {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		shard := ix.WeightMap[name]
		if shard == "" || shard != filepath.Base(shard) || strings.HasPrefix(shard, ".") {
			return fail(&Error{Path: idx, Msg: fmt.Sprintf("weight_map[%q] = %q is not a file name in the folder", name, shard)})
		}
		if _, ok := shards[shard]; !ok {
			f, err := Open(filepath.Join(dir, shard))
			if err != nil {
				return fail(fmt.Errorf("%w (named in %s)", err, IndexName))
			}
			shards[shard] = f
			s.Files = append(s.Files, f)
		}
	}
	sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Path < s.Files[j].Path })
	for _, f := range s.Files {
		for i := range f.Tensors {
			name := f.Tensors[i].Name
			if g, dup := s.where[name]; dup {
				return fail(&Error{Path: f.Path, Msg: fmt.Sprintf("tensor %q is also in %s", name, g.Path)})
			}
			s.where[name] = f
		}
	}
	for _, name := range names {
		want := shards[ix.WeightMap[name]]
		if s.where[name] != want {
			return fail(&Error{Path: want.Path, Msg: fmt.Sprintf("has no tensor %q, which %s places there", name, IndexName)})
		}
	}
	return s, nil
}

// Tensor finds a tensor and the file holding it.
func (s *Set) Tensor(name string) (*Tensor, *File, bool) {
	f, ok := s.where[name]
	if !ok {
		return nil, nil, false
	}
	t, _ := f.Tensor(name)
	return t, f, true
}

// Names lists every tensor name, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.where))
	for n := range s.where {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Close unmaps every file.
func (s *Set) Close() error {
	var first error
	for _, f := range s.Files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
