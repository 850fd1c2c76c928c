package sample

import (
	"math"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name  string
		edit  func(p *Params)
		vocab int    // for New; 0 = Validate only
		want  string // substring of the error; "" = valid
	}{
		{"defaults", func(p *Params) {}, 0, ""},
		{"greedy", func(p *Params) { p.Temperature = 0 }, 0, ""},
		{"everything in range", func(p *Params) {
			p.Temperature, p.TopP, p.MinP, p.TopK = 0.7, 0.9, 0.05, 40
			p.RepetitionPenalty, p.PresencePenalty, p.FrequencyPenalty, p.PenaltyLastN = 1.1, -2, 2, 64
			p.LogitBias = map[int32]float32{3: -100, 4: 100}
			p.MaxTokens, p.Stop, p.StopTokens = 16, []string{"\n\n"}, []int32{2}
			p.Logprobs, p.TopLogprobs = true, 20
		}, 10, ""},
		{"zero params", func(p *Params) { *p = Params{} }, 0, "top_p 0 must be in (0, 1]"},
		{"negative temperature", func(p *Params) { p.Temperature = -0.1 }, 0, "temperature -0.1"},
		{"NaN temperature", func(p *Params) { p.Temperature = nan }, 0, "temperature NaN"},
		{"inf temperature", func(p *Params) { p.Temperature = float32(math.Inf(1)) }, 0, "temperature +Inf"},
		{"top_p 0", func(p *Params) { p.TopP = 0 }, 0, "top_p 0"},
		{"top_p above 1", func(p *Params) { p.TopP = 1.01 }, 0, "top_p 1.01"},
		{"min_p negative", func(p *Params) { p.MinP = -0.5 }, 0, "min_p -0.5"},
		{"min_p above 1", func(p *Params) { p.MinP = 2 }, 0, "min_p 2"},
		{"top_k negative", func(p *Params) { p.TopK = -1 }, 0, "top_k -1"},
		{"repetition 0", func(p *Params) { p.RepetitionPenalty = 0 }, 0, "repetition_penalty 0"},
		{"presence out of range", func(p *Params) { p.PresencePenalty = 2.5 }, 0, "presence_penalty 2.5"},
		{"frequency out of range", func(p *Params) { p.FrequencyPenalty = -3 }, 0, "frequency_penalty -3"},
		{"penalty_last_n negative", func(p *Params) { p.PenaltyLastN = -1 }, 0, "penalty_last_n -1"},
		{"bias value", func(p *Params) { p.LogitBias = map[int32]float32{5: 101} }, 0, "logit_bias[5] = 101"},
		{"bias negative id", func(p *Params) { p.LogitBias = map[int32]float32{-1: 1} }, 0, "logit_bias token id -1"},
		{"bias too many", func(p *Params) {
			p.LogitBias = map[int32]float32{}
			for i := range MaxLogitBias + 1 {
				p.LogitBias[int32(i)] = 1
			}
		}, 0, "logit_bias has 1025 entries"},
		{"bias id outside vocab", func(p *Params) { p.LogitBias = map[int32]float32{10: 1} }, 10, "logit_bias token id 10 outside vocabulary [0, 10)"},
		{"max_tokens negative", func(p *Params) { p.MaxTokens = -5 }, 0, "max_tokens -5"},
		{"empty stop", func(p *Params) { p.Stop = []string{"a", ""} }, 0, "stop[1] is empty"},
		{"long stop", func(p *Params) { p.Stop = []string{strings.Repeat("x", MaxStopBytes+1)} }, 0, "stop[0] is 1025 bytes"},
		{"too many stops", func(p *Params) { p.Stop = make([]string, MaxStops+1); p.Stop[0] = "x" }, 0, "65 stop strings"},
		{"stop token negative", func(p *Params) { p.StopTokens = []int32{-2} }, 0, "stop_tokens[0] = -2 is negative"},
		{"stop token outside vocab", func(p *Params) { p.StopTokens = []int32{1, 99} }, 10, "stop_tokens[1] = 99 outside"},
		{"top_logprobs too many", func(p *Params) { p.Logprobs, p.TopLogprobs = true, 21 }, 0, "top_logprobs 21"},
		{"top_logprobs without logprobs", func(p *Params) { p.TopLogprobs = 3 }, 0, "needs logprobs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Defaults()
			tt.edit(&p)
			var err error
			if tt.vocab > 0 {
				_, err = New(p, tt.vocab)
			} else {
				err = p.Validate()
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("no error, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error %q does not mention %q", err, tt.want)
			case err != nil && !strings.HasPrefix(err.Error(), "sample: "):
				t.Fatalf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestNewBadVocab(t *testing.T) {
	if _, err := New(Defaults(), 0); err == nil || !strings.Contains(err.Error(), "vocabulary size 0") {
		t.Fatalf("got %v, want a vocabulary size error", err)
	}
}
