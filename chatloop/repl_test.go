package chatloop

import (
	"context"
	"io"
	"strings"
	"testing"
)

func TestREPLTranscript(t *testing.T) {
	seed := uint64(7)
	p := greedy()
	p.Seed = &seed
	var stats strings.Builder
	s, _ := newSession(t, 512, func(o *Options) { o.Params = p; o.Stats = &stats })
	script := strings.Join([]string{
		"hi",
		"",
		"/set temperature 0.5",
		"/set parameter top_k 5",
		"/set top_p 2",
		"/set top_k many",
		"/set nonsense 1",
		"/set system Answer in French.",
		"/show",
		"  how are you  ",
		"/clear",
		"again",
		"/nosuch",
		"/bye",
		"never read",
	}, "\n")
	var out strings.Builder
	in := Lines(strings.NewReader(script), &out, ">>> ")
	if err := s.REPL(context.Background(), in, &out, nil); err != nil {
		t.Fatal(err)
	}
	want := `>>> hi
1: hi

>>> 
>>> /set temperature 0.5
Set temperature.
>>> /set parameter top_k 5
Set top_k.
>>> /set top_p 2
sample: top_p 2 must be in (0, 1] (1 disables)
>>> /set top_k many
top_k: "many" is not an integer
>>> /set nonsense 1
unknown parameter "nonsense" (/help lists them)
>>> /set system Answer in French.
Set system.
>>> /show
temperature     0.5
top_k           5
top_p           1
min_p           0
repeat_penalty  1 (last 0 tokens)
presence        0
frequency       0
seed            7
max_tokens      unlimited
stop            []
system          "Answer in French."
conversation    2 messages, 26 of 512 context tokens in use
>>>   how are you  
2: how are you

>>> /clear
Cleared the conversation.
>>> again
1: again

>>> /nosuch
Unknown command /nosuch: /help lists the commands.
>>> /bye
`
	if got := out.String(); got != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if n := strings.Count(stats.String(), "eval rate:"); n != 3*2 {
		t.Fatalf("stats reported %d rates, want 2 per answer:\n%s", n, stats.String())
	}
	if got := s.Params(); got.Temperature != 0.5 || got.TopK != 5 || got.TopP != 1 {
		t.Fatalf("params after the script: %+v", got)
	}
}

func TestREPLEndsAtEOFAndWhenCancelled(t *testing.T) {
	s, _ := newSession(t, 512, nil)
	var out strings.Builder
	if err := s.REPL(context.Background(), Lines(strings.NewReader("hi"), &out, "> "), &out, nil); err != nil {
		t.Fatal(err)
	}
	if want := "> hi\n1: hi\n\n> \n"; out.String() != want {
		t.Fatalf("transcript %q, want %q", out.String(), want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.REPL(ctx, Lines(strings.NewReader("more\n"), nil, ""), io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if len(s.Messages()) != 2 {
		t.Fatal("a cancelled REPL answered")
	}
}

func TestREPLInterruptStopsOnlyTheAnswer(t *testing.T) {
	var intr Interrupts
	s, lm := newSession(t, 512, nil)
	lm.OnFeed = func(n int) {
		if n == 1 && lm.Len() > 0 && lm.Tok.Decode(lm.Tokens[lm.Len()-1:]) == "r" {
			intr.Interrupt() // Ctrl-C as the answer reaches "...r"
		}
	}
	var out strings.Builder
	if err := s.REPL(context.Background(), Lines(strings.NewReader("write more\nnext\n"), &out, ">>> "), &out, &intr); err != nil {
		t.Fatal(err)
	}
	want := ">>> write more\n1: wr\n(interrupted)\n\n>>> next\n2: next\n\n>>> \n"
	if out.String() != want {
		t.Fatalf("transcript %q, want %q", out.String(), want)
	}
}

func TestREPLReportsContextNotesAndInputErrors(t *testing.T) {
	s, lm := newSession(t, 48, func(o *Options) { o.Reserve = 4 })
	lm.Reply = func(users []string) string { return strings.Repeat("=", 5*len(users[len(users)-1])) }
	var out strings.Builder
	script := "abc\n" + strings.Repeat("q", 60) + "\nabcdef\n"
	if err := s.REPL(context.Background(), Lines(strings.NewReader(script), &out, ">>> "), &out, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"the message does not fit: its prompt is 79 tokens, the context 48\n",
		"(the context is full: the 2 oldest messages were left out)\n(the context is full: the answer was cut off)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out.String())
		}
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	s, _ := newSession(t, 64, nil)
	var out strings.Builder
	if quit, err := s.command("/help", &out); quit || err != nil {
		t.Fatal(quit, err)
	}
	for _, cmd := range []string{"/set temperature", "/set top_p", "/set top_k", "/set seed", "/set system", "/show", "/clear", "/bye", "Ctrl-C"} {
		if !strings.Contains(out.String(), cmd) {
			t.Errorf("/help does not mention %s", cmd)
		}
	}
}
