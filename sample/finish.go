package sample

import "slices"

// FinishReason says why generation ended, in OpenAI's words.
type FinishReason string

const (
	NotFinished  FinishReason = ""       // keep generating
	FinishStop   FinishReason = "stop"   // end-of-generation token, stop token or stop string
	FinishLength FinishReason = "length" // MaxTokens reached
)

// Finish reports whether generation ends with token id, the generated-th
// generated token (1-based). endOfGeneration is the tokenizer's verdict on
// id (EOS, <|eot_id|>, <|im_end|>...). A stop takes precedence over the
// length limit when both hold. Stop strings are the StopMatcher's business.
func (s *Sampler) Finish(id int32, generated int, endOfGeneration bool) FinishReason {
	if endOfGeneration {
		return FinishStop
	}
	if _, ok := slices.BinarySearch(s.stopToks, id); ok {
		return FinishStop
	}
	if s.p.MaxTokens > 0 && generated >= s.p.MaxTokens {
		return FinishLength
	}
	return NotFinished
}
