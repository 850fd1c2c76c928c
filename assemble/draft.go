package assemble

import (
	"fmt"

	"kiln/convert"
	"kiln/model"
	"kiln/tokenizer"
)

// DraftError is a failure of the draft model: it did not load, or its
// vocabulary is not the model's. Path is empty when the file did not
// load (the cause names it).
type DraftError struct {
	Path string
	Err  error
}

func (e *DraftError) Error() string {
	if e.Path == "" {
		return "draft: " + e.Err.Error()
	}
	return fmt.Sprintf("draft %s: %v", e.Path, e.Err)
}

func (e *DraftError) Unwrap() error { return e.Err }

// loadDraft loads the draft at path on target's worker pool, so that the
// two models share the cores, quantized on load with scheme when it is a
// Hugging Face folder (a GGUF file is used as it is, as loadWeights does). It refuses a draft
// whose vocabulary differs from the target's: another size, or, when tok
// (the target's tokenizer) is given, other token texts.
func loadDraft(path string, target *model.Model, tok *tokenizer.Tokenizer, scheme *convert.Scheme) (*weights, error) {
	d, err := loadWeights(path, scheme, model.Options{Pool: target.Pool()}, false)
	if err != nil {
		return nil, &DraftError{Err: err}
	}
	if dv, tv := d.model.Config.Vocab, target.Config.Vocab; dv != tv {
		d.close()
		return nil, &DraftError{Path: path, Err: fmt.Errorf("its vocabulary has %d tokens, the model's %d: a draft must share the model's tokenizer", dv, tv)}
	}
	if tok != nil {
		if err := sameTokens(path, tok); err != nil {
			d.close()
			return nil, err
		}
	}
	return d, nil
}

// sameTokens checks that the draft at path has tok's token texts (when
// it has a tokenizer at all: a GGUF without one is taken on its
// vocabulary size).
func sameTokens(path string, tok *tokenizer.Tokenizer) error {
	var dt *tokenizer.Tokenizer
	if IsHFDir(path) {
		t, err := HFTokenizer(path)
		if err != nil {
			return nil
		}
		dt = t
	} else {
		f, err := OpenGGUF(path)
		if err != nil {
			return &DraftError{Err: err}
		}
		defer f.Close()
		t, err := tokenizer.FromGGUF(f)
		if err != nil {
			return nil
		}
		dt = t
	}
	a, b := tok.Vocab().Tokens, dt.Vocab().Tokens
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return &DraftError{Path: path, Err: fmt.Errorf("token %d is %q, the model's is %q: a draft must share the model's tokenizer", i, b[i], a[i])}
		}
	}
	return nil
}
