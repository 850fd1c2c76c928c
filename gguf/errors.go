package gguf

import (
	"errors"
	"fmt"
)

// Error categories of a FormatError, for errors.Is.
var (
	ErrNotGGUF     = errors.New("gguf: not a GGUF file")
	ErrUnsupported = errors.New("gguf: unsupported GGUF variant")
	ErrTruncated   = errors.New("gguf: truncated file")
	ErrInvalid     = errors.New("gguf: invalid GGUF file")
)

// FormatError reports a file that is not a readable GGUF v2/v3 file: what
// was wrong, where, and (in Msg) what to do about it.
type FormatError struct {
	Path   string // the file's name; "" for Parse
	Offset int64  // byte offset in the file where the problem was found
	Msg    string
	Kind   error // ErrNotGGUF, ErrUnsupported, ErrTruncated or ErrInvalid
}

func (e *FormatError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("gguf: %s: %s (at byte %d)", e.Path, e.Msg, e.Offset)
	}
	return fmt.Sprintf("gguf: %s (at byte %d)", e.Msg, e.Offset)
}

// Unwrap returns the error's category.
func (e *FormatError) Unwrap() error { return e.Kind }
