package chatloop

import (
	"context"
	"strings"
	"testing"
)

// A sampled BOS ends the answer (a base model starting its next document)
// and is not printed as "<s>": the scripted model's third one-token
// forward makes BOS the most likely next token.
func TestBOSEndsTheAnswer(t *testing.T) {
	s, lm := newSession(t, 512, nil)
	ones := 0
	lm.Edit = func(fed int, logits []float32) {
		if fed == 1 {
			if ones++; ones == 3 {
				logits[lm.Tok.Vocab().BOS] = 30
			}
		}
	}
	res, out := turn(t, s, context.Background(), "hello")
	if out != "1: " || res.Reason != Stop {
		t.Fatalf("answer %q (%s), want %q ended by BOS (stop)", out, res.Reason, "1: ")
	}
}

// Ctrl-C stops the output where it is: text the stop matcher held back
// (it could have begun a stop string) is not printed after the interrupt.
func TestInterruptPrintsNothingMore(t *testing.T) {
	var intr Interrupts
	s, lm := newSession(t, 512, func(o *Options) { o.Params.Stop = []string{"1: h!"} })
	feeds := 0
	lm.OnFeed = func(int) {
		if feeds++; feeds == 5 { // the prompt, then "1", ":", " ", "h" fed back: all held back
			intr.Interrupt()
		}
	}
	ctx, end := intr.Begin(context.Background())
	res, out := turn(t, s, ctx, "hello")
	end()
	if res.Reason != Interrupted || out != "" {
		t.Fatalf("%q (%s), want nothing written after the interrupt", out, res.Reason)
	}
}

// After /clear, /show reports no context in use (the cache is kept only
// for reuse by the next turn).
func TestShowAfterClear(t *testing.T) {
	s, _ := newSession(t, 512, nil)
	turn(t, s, context.Background(), "hello")
	var out strings.Builder
	for _, c := range []string{"/show", "/clear", "/show"} {
		if _, err := s.command(c, &out); err != nil {
			t.Fatal(err)
		}
	}
	got := out.String()
	if !strings.Contains(got, "2 messages, 32 of 512 context tokens in use") || !strings.Contains(got, "0 messages, 0 of 512 context tokens in use") {
		t.Fatalf("/show, /clear, /show:\n%s", got)
	}
}
