package engine

import "fmt"

// RequestError is a request Submit refuses for what it asks, not for the
// engine's state or configuration: an empty prompt, a prompt longer than
// the context or the KV pool, a token outside the vocabulary, more
// completions than Config.MaxSeqs, bad sampling parameters. A server maps
// it to a client error (400) naming Field; any other Submit error is the
// caller's setup (no tokenizer for a text prompt) or ErrClosed.
type RequestError struct {
	Field  string // the Request field at fault: "Prompt", "N", "BeamWidth", "LengthPenalty", "PromptLogits", "Params", "Constraint"
	Reason string // what is wrong, for people: "prompt of 4100 tokens leaves no room in the 4096-token context"
	Err    error  // the cause, when another package found it (sample's parameter check); may be nil
}

func (e *RequestError) Error() string { return "engine: " + e.Reason }

func (e *RequestError) Unwrap() error { return e.Err }

// refuse returns a *RequestError for field.
func refuse(field, format string, args ...any) *RequestError {
	return &RequestError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
