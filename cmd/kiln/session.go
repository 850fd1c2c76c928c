package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kiln/convert"
	"kiln/gguf"
	"kiln/model"
	"kiln/tokenizer"
)

// loaded is a model file opened for the single-sequence subcommands
// (probs, generate, run): its mapping, weights and tokenizer.
type loaded struct {
	file  *gguf.File
	model *model.Model
	tok   *tokenizer.Tokenizer
}

// openModel loads a MODEL argument's weights and tokenizer: a GGUF file
// (or an hf: reference), or a Hugging Face folder (config.json,
// *.safetensors, tokenizer.json), quantized on load when scheme is set.
func openModel(path string, threads int, scheme *convert.Scheme) (*loaded, error) {
	if isHFDir(path) {
		m, _, err := loadHF(path, scheme, model.Options{Threads: threads})
		if err != nil {
			return nil, err
		}
		tok, err := hfTokenizer(path)
		if err != nil {
			m.Close()
			return nil, err
		}
		return &loaded{model: m, tok: tok}, nil
	}
	if scheme != nil {
		return nil, errTypeOnGGUF(path)
	}
	f, err := openGGUF(path, os.Stderr)
	if err != nil {
		return nil, err
	}
	m, err := model.Load(f, model.Options{Threads: threads})
	if err != nil {
		f.Close()
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		m.Close()
		f.Close()
		return nil, err
	}
	return &loaded{file: f, model: m, tok: tok}, nil
}

func (l *loaded) Close() {
	l.model.Close()
	if l.file != nil {
		l.file.Close()
	}
}

// isHFDir reports whether path is a folder holding a config.json: a
// Hugging Face model folder (model.LoadHF says what else it lacks).
func isHFDir(path string) bool {
	st, err := os.Stat(filepath.Join(path, "config.json"))
	return err == nil && st.Mode().IsRegular()
}

// hfTokenizer reads a Hugging Face folder's tokenizer.json (with
// tokenizer_config.json and generation_config.json).
func hfTokenizer(dir string) (*tokenizer.Tokenizer, error) {
	v, err := tokenizer.LoadHFTokenizer(dir)
	if err != nil {
		return nil, err
	}
	return tokenizer.New(v)
}

// loadWeights loads a MODEL argument's weights alone (bench): a GGUF file
// or hf: reference, or a Hugging Face folder (quantized on load when
// scheme is set). bytes is the weights' size (the GGUF's tensor data; a
// folder's *.safetensors files, or its tensors as quantized on load), close
// releases the model and its mapping.
func loadWeights(arg string, scheme *convert.Scheme, opts model.Options, stderr io.Writer) (m *model.Model, bytes uint64, close func(), err error) {
	if isHFDir(arg) {
		m, bytes, err := loadHF(arg, scheme, opts)
		if err != nil {
			return nil, 0, nil, err
		}
		if scheme == nil {
			files, _ := filepath.Glob(filepath.Join(arg, "*.safetensors"))
			for _, name := range files {
				if st, err := os.Stat(name); err == nil {
					bytes += uint64(st.Size())
				}
			}
		}
		return m, bytes, m.Close, nil
	}
	if scheme != nil {
		return nil, 0, nil, errTypeOnGGUF(arg)
	}
	f, err := openGGUF(arg, stderr)
	if err != nil {
		return nil, 0, nil, err
	}
	m, err = model.Load(f, opts)
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	for i := range f.Tensors {
		bytes += f.Tensors[i].Size
	}
	return m, bytes, func() { m.Close(); f.Close() }, nil
}

// openGGUF maps a MODEL argument: a local path, or an hf: reference that
// is fetched into the cache first (progress on stderr).
func openGGUF(arg string, stderr io.Writer) (*gguf.File, error) {
	path, err := resolveModel(arg, stderr)
	if err != nil {
		return nil, err
	}
	if err := checkModelPath(path); err != nil {
		return nil, err
	}
	return gguf.Open(path)
}

// checkModelPath says what is wrong with a MODEL that is neither a GGUF
// file nor a Hugging Face folder, before anything opens it (opening a
// FIFO would block): a folder without config.json, or something that is
// not a regular file.
func checkModelPath(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a folder without config.json: a MODEL is a .gguf file or a Hugging Face folder (config.json, *.safetensors, tokenizer.json)", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (mode %s): a MODEL is a .gguf file or a Hugging Face folder", path, st.Mode().Type())
	}
	return nil
}

// promptTokens turns a command-line prompt into ids the way the llama.cpp
// oracle does: "ids:1,2,3" is taken as is; text is tokenized without
// parsing special tokens and gets BOS in front when the vocabulary asks.
func (l *loaded) promptTokens(text string) ([]int32, error) {
	if rest, ok := strings.CutPrefix(text, "ids:"); ok {
		return parseIDs(rest, l.model.Config.Vocab)
	}
	ids := l.tok.Encode(text, false)
	v := l.tok.Vocab()
	if v.AddBOS && v.BOS >= 0 && (len(ids) == 0 || ids[0] != v.BOS) {
		ids = append([]int32{v.BOS}, ids...)
	}
	return ids, nil
}

// parseIDs reads "1,2,3"; vocab > 0 bounds the ids.
func parseIDs(s string, vocab int) ([]int32, error) {
	var ids []int32
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 || (vocab > 0 && int(v) >= vocab) {
			return nil, fmt.Errorf("token id %q is not an integer in [0, %d)", f, vocab)
		}
		ids = append(ids, int32(v))
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no token ids after \"ids:\"")
	}
	return ids, nil
}
