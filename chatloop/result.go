package chatloop

import (
	"fmt"
	"io"
	"time"
)

// Reason says why a generation ended.
type Reason string

const (
	Stop        Reason = "stop"        // end-of-generation token or stop string
	Length      Reason = "length"      // Params.MaxTokens reached
	ContextFull Reason = "context"     // the KV cache is full
	Interrupted Reason = "interrupted" // the context was cancelled (Ctrl-C)
)

// Result is one answer.
type Result struct {
	Text    string  // what was written to the output: the answer, without any stop string
	Tokens  []int32 // every sampled token, the end-of-generation one included
	Reason  Reason
	Dropped int // old messages left out of the conversation to make room for this turn
	Stats   Stats
}

// Stats are one turn's counts and timings, reported as 'ollama run
// --verbose' does.
type Stats struct {
	Load         time.Duration // loading the model: set for the first turn only
	Total        time.Duration // the whole turn (rendering, tokenizing, prompt, answer), plus Load
	PromptTokens int           // prompt tokens fed to the model
	CachedTokens int           // prompt tokens already in the KV cache from earlier turns
	PromptEval   time.Duration // feeding PromptTokens
	EvalTokens   int           // tokens sampled
	Eval         time.Duration // sampling them and feeding them back
}

// Report writes s in ollama's --verbose layout.
func (s Stats) Report(w io.Writer) error {
	cached := ""
	if s.CachedTokens > 0 {
		cached = fmt.Sprintf(" (+%d cached)", s.CachedTokens)
	}
	_, err := fmt.Fprintf(w, "total duration:       %v\nload duration:        %v\nprompt eval count:    %d token(s)%s\nprompt eval duration: %v\nprompt eval rate:     %.2f tokens/s\neval count:           %d token(s)\neval duration:        %v\neval rate:            %.2f tokens/s\n",
		s.Total, s.Load, s.PromptTokens, cached, s.PromptEval, rate(s.PromptTokens, s.PromptEval), s.EvalTokens, s.Eval, rate(s.EvalTokens, s.Eval))
	return err
}

// rate is n per second of d; 0 when d is 0.
func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
