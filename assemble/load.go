package assemble

import (
	"fmt"
	"os"
	"path/filepath"

	"kiln/convert"
	"kiln/gguf"
	"kiln/model"
	"kiln/tokenizer"
)

// IsHFDir reports whether path is a folder holding a config.json: a
// Hugging Face model folder (model.LoadHF says what else it lacks).
func IsHFDir(path string) bool {
	st, err := os.Stat(filepath.Join(path, "config.json"))
	return err == nil && st.Mode().IsRegular()
}

// CheckModelPath says what is wrong with a model path that is neither a
// GGUF file nor a Hugging Face folder, before anything opens it (opening
// a FIFO would block): a folder without config.json, or something that
// is not a regular file.
func CheckModelPath(path string) error {
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

// OpenGGUF maps a GGUF file after CheckModelPath.
func OpenGGUF(path string) (*gguf.File, error) {
	if err := CheckModelPath(path); err != nil {
		return nil, err
	}
	return gguf.Open(path)
}

// HFTokenizer reads a Hugging Face folder's tokenizer.json (with
// tokenizer_config.json and generation_config.json).
func HFTokenizer(dir string) (*tokenizer.Tokenizer, error) {
	v, err := tokenizer.LoadHFTokenizer(dir)
	if err != nil {
		return nil, err
	}
	return tokenizer.New(v)
}

// weights is one model file loaded: the model, its mapping (nil for a
// folder, whose model owns its files), and its tokenizer when asked.
type weights struct {
	model *model.Model
	file  *gguf.File
	tok   *tokenizer.Tokenizer
	bytes uint64 // the weights' size: see Assembly.WeightBytes
}

func (w *weights) close() {
	w.model.Close()
	if w.file != nil {
		w.file.Close()
	}
}

// loadWeights loads path, a GGUF file (as it is) or a Hugging Face folder
// (quantized on load when scheme is set), and its tokenizer when withTok.
func loadWeights(path string, scheme *convert.Scheme, opts model.Options, withTok bool) (*weights, error) {
	if IsHFDir(path) {
		m, bytes, err := loadHF(path, scheme, opts)
		if err != nil {
			return nil, err
		}
		w := &weights{model: m, bytes: bytes}
		if withTok {
			if w.tok, err = HFTokenizer(path); err != nil {
				m.Close()
				return nil, err
			}
		}
		return w, nil
	}
	f, err := OpenGGUF(path)
	if err != nil {
		return nil, err
	}
	m, err := model.Load(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &weights{model: m, file: f}
	for i := range f.Tensors {
		w.bytes += f.Tensors[i].Size
	}
	if withTok {
		if w.tok, err = tokenizer.FromGGUF(f); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

// loadHF loads a Hugging Face folder, quantized on load when scheme is
// set. bytes is the weights' size: the tensors as converted when
// quantized, else the folder's *.safetensors files.
func loadHF(dir string, scheme *convert.Scheme, opts model.Options) (m *model.Model, bytes uint64, err error) {
	if scheme == nil {
		if m, err = model.LoadHF(dir, opts); err != nil {
			return nil, 0, err
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
		for _, name := range files {
			if st, err := os.Stat(name); err == nil {
				bytes += uint64(st.Size())
			}
		}
		return m, bytes, nil
	}
	m, rep, err := convert.LoadHF(dir, convert.Options{Scheme: *scheme}, opts)
	if err != nil {
		return nil, 0, err
	}
	for _, t := range rep.Tensors {
		bytes += t.Bytes
	}
	return m, bytes, nil
}
