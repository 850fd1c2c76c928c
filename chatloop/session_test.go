package chatloop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"kiln/chat"
	"kiln/chatloop/chattest"
	"kiln/sample"
)

// greedy are deterministic parameters: the scripted model's one-hot logits
// make every sampler pick the same token, but greedy draws no random number.
func greedy() sample.Params {
	p := sample.Defaults()
	p.Temperature = 0
	return p
}

// newSession returns a ChatML session over a scripted model, run by an
// engine, with room for capacity tokens; edit adjusts the options first.
func newSession(t *testing.T, capacity int, edit func(*Options)) (*Session, *chattest.LM) {
	t.Helper()
	tok := chattest.Tokenizer(chattest.Vocab())
	lm := chattest.NewLM(tok, capacity)
	e, err := chattest.NewEngine(lm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	tmpl, err := chat.Compile(chat.ChatML)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Engine: e, Context: capacity, Tokenizer: tok, Prompter: TemplatePrompter(tmpl, tok), Params: greedy()}
	if edit != nil {
		edit(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, lm
}

func turn(t *testing.T, s *Session, ctx context.Context, user string) (Result, string) {
	t.Helper()
	var out strings.Builder
	res, err := s.Turn(ctx, user, &out)
	if err != nil {
		t.Fatalf("Turn(%q): %v", user, err)
	}
	if out.String() != res.Text {
		t.Fatalf("Turn(%q) wrote %q but Result.Text is %q", user, out.String(), res.Text)
	}
	return res, out.String()
}

func TestTurnAnswersAndStopsAtEndOfTurn(t *testing.T) {
	s, lm := newSession(t, 512, func(o *Options) { o.System = "be brief" })
	res, out := turn(t, s, context.Background(), "hi there")
	if out != "1: hi there" || res.Reason != Stop {
		t.Fatalf("answer %q (%s), want %q (stop)", out, res.Reason, "1: hi there")
	}
	end, _ := lm.Tok.ID("<|im_end|>")
	if last := res.Tokens[len(res.Tokens)-1]; last != end || len(res.Tokens) != len(out)+1 {
		t.Fatalf("tokens %v: want one per character, then <|im_end|> (%d)", res.Tokens, end)
	}
	want := []chat.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi there"}, {Role: "assistant", Content: "1: hi there"}}
	if got := s.Messages(); !slices.Equal(got, want) {
		t.Fatalf("messages %v, want %v", got, want)
	}
	// The end-of-turn token is sampled but never computed: the engine
	// holds the prompt and the answer's text.
	if s.CacheLen() != lm.Len() || res.Stats.PromptTokens+len(out) != lm.Len() || res.Stats.CachedTokens != 0 {
		t.Fatalf("cache %d (model %d), prompt %d + answer %d", s.CacheLen(), lm.Len(), res.Stats.PromptTokens, len(out))
	}
	if res.Stats.EvalTokens != len(res.Tokens) {
		t.Fatalf("eval count %d, want %d", res.Stats.EvalTokens, len(res.Tokens))
	}
}

func TestSecondTurnFeedsOnlyTheNewTokens(t *testing.T) {
	s, lm := newSession(t, 512, nil)
	turn(t, s, context.Background(), "one")
	before := lm.Len()
	res, out := turn(t, s, context.Background(), "two")
	if out != "2: two" {
		t.Fatalf("second answer %q, want %q (the model sees both turns)", out, "2: two")
	}
	// The re-rendered first answer tokenizes as it was sampled, so the
	// whole cache is reused and only "<|im_end|>\n<|im_start|>user\ntwo..." is fed.
	full, err := s.prompter(s.conversation([]chat.Message{{Role: "user", Content: "one"}, {Role: "assistant", Content: "1: one"}, {Role: "user", Content: "two"}}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.CachedTokens != before || res.Stats.PromptTokens != len(full)-before {
		t.Fatalf("cached %d, fed %d; want %d cached, %d fed", res.Stats.CachedTokens, res.Stats.PromptTokens, before, len(full)-before)
	}
	if !slices.Equal(lm.Tokens[:len(full)], full) {
		t.Fatal("the cache does not start with the second turn's prompt")
	}
}

func TestCacheRewindsWhereTheConversationChanged(t *testing.T) {
	s, lm := newSession(t, 512, nil)
	turn(t, s, context.Background(), "one")
	s.SetSystem("now with a system message")
	forwards := len(lm.Starts)
	res, out := turn(t, s, context.Background(), "two")
	// Only the leading <|im_start|> is shared: the system turn comes first.
	if out != "2: two" || res.Stats.CachedTokens != 1 {
		t.Fatalf("answer %q with %d cached tokens; want %q and 1 reusable", out, res.Stats.CachedTokens, "2: two")
	}
	if lm.Starts[forwards] != 1 {
		t.Fatalf("the second turn's forwards began at %v; want its prompt at 1", lm.Starts[forwards:])
	}
	s.Clear()
	res, out = turn(t, s, context.Background(), "three")
	sys := len(lm.Tok.EncodePrompt("<|im_start|>system\nnow with a system message<|im_end|>\n<|im_start|>user\n"))
	if out != "1: three" || res.Stats.CachedTokens != sys {
		t.Fatalf("after /clear: %q with %d cached tokens; want %q reusing the %d tokens up to the user's text", out, res.Stats.CachedTokens, "1: three", sys)
	}
}

func TestStopStringsAndMaxTokens(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*sample.Params)
		want   string
		reason Reason
	}{
		{"stop straddles tokens", func(p *sample.Params) { p.Stop = []string{"ll"} }, "1: he", Stop},
		{"earliest stop wins", func(p *sample.Params) { p.Stop = []string{"lo", "el"} }, "1: h", Stop},
		{"held-back prefix released", func(p *sample.Params) { p.Stop = []string{"o!"} }, "1: hello", Stop},
		{"max tokens", func(p *sample.Params) { p.MaxTokens = 4 }, "1: h", Length},
		{"max tokens after the end", func(p *sample.Params) { p.MaxTokens = 100 }, "1: hello", Stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := greedy()
			tc.edit(&p)
			s, _ := newSession(t, 512, func(o *Options) { o.Params = p })
			res, out := turn(t, s, context.Background(), "hello")
			if out != tc.want || res.Reason != tc.reason {
				t.Fatalf("%q (%s), want %q (%s)", out, res.Reason, tc.want, tc.reason)
			}
			if last := s.Messages()[1]; last.Content != tc.want {
				t.Fatalf("the conversation keeps %q, want %q", last.Content, tc.want)
			}
		})
	}
}

func TestInterrupt(t *testing.T) {
	var intr Interrupts
	s, lm := newSession(t, 512, nil)
	feeds := 0
	lm.OnFeed = func(int) {
		if feeds++; feeds == 4 { // the prompt, then "1", ":", " " fed back
			if !intr.Interrupt() {
				t.Error("Interrupt found no generation in flight")
			}
		}
	}
	ctx, end := intr.Begin(context.Background())
	res, out := turn(t, s, ctx, "hello")
	end()
	if res.Reason != Interrupted || out != "1: " {
		t.Fatalf("%q (%s), want %q (interrupted)", out, res.Reason, "1: ")
	}
	if intr.Interrupt() {
		t.Fatal("Interrupt after the generation ended reported one in flight")
	}
	// The partial answer is part of the conversation, and the session goes on.
	if got := s.Messages(); len(got) != 2 || got[1].Content != "1: " {
		t.Fatalf("messages %v", got)
	}
	lm.OnFeed = nil
	if _, out := turn(t, s, context.Background(), "again"); out != "2: again" {
		t.Fatalf("after the interruption: %q", out)
	}
}

func TestInterruptDuringPromptDropsTheMessage(t *testing.T) {
	s, lm := newSession(t, 512, nil)
	turn(t, s, context.Background(), "one")
	ctx, cancel := context.WithCancel(context.Background())
	lm.OnFeed = func(int) { cancel() }
	long := strings.Repeat("x", 2*chattest.PromptChunk) // two prompt chunks: cancelled after the first
	res, out := turn(t, s, ctx, long)
	if res.Reason != Interrupted || out != "" || res.Stats.PromptTokens != chattest.PromptChunk {
		t.Fatalf("%q (%s) after %d prompt tokens; want nothing, interrupted after %d", out, res.Reason, res.Stats.PromptTokens, chattest.PromptChunk)
	}
	if got := s.Messages(); len(got) != 2 {
		t.Fatalf("an answer interrupted before any text left %d messages, want the 2 of the first turn", len(got))
	}
	if s.CacheLen() != lm.Len() {
		t.Fatalf("cache mirror %d tokens, model %d", s.CacheLen(), lm.Len())
	}
	lm.OnFeed = nil
	if _, out := turn(t, s, context.Background(), "two"); out != "2: two" {
		t.Fatalf("after the interruption: %q", out)
	}
}

// A ChatML turn "<|im_start|>user\nX<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n"
// costs 22 tokens plus X and A in this vocabulary.
func TestContextFullDropsOldestTurns(t *testing.T) {
	s, lm := newSession(t, 100, func(o *Options) { o.System = "S"; o.Reserve = 10 })
	var answers []string
	var dropped []int
	for _, msg := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		res, out := turn(t, s, context.Background(), msg)
		answers, dropped = append(answers, out), append(dropped, res.Dropped)
		if res.Reason != Stop {
			t.Fatalf("%q: %s", msg, res.Reason)
		}
		if lm.Len() > lm.Cap() {
			t.Fatal("cache overflow")
		}
	}
	// system 5 tokens; turn 1 prompt 5+19 = 24, answer 7: 31 in use;
	// turn 2 prompt 31+3+19 = 53, answer 7; turn 3 would need 60+22+10 > 100:
	// the first pair goes, and the model sees two user turns again.
	wantAnswers := []string{"1: aaaa", "2: bbbb", "2: cccc", "2: dddd"}
	wantDropped := []int{0, 0, 2, 2}
	if !slices.Equal(answers, wantAnswers) || !slices.Equal(dropped, wantDropped) {
		t.Fatalf("answers %q dropped %v; want %q %v", answers, dropped, wantAnswers, wantDropped)
	}
	msgs := s.Messages()
	if msgs[0].Role != "system" || msgs[1].Content != "cccc" || len(msgs) != 5 {
		t.Fatalf("conversation %v: want the system message, then cccc onwards", msgs)
	}
}

func TestMessageTooLongForTheContext(t *testing.T) {
	s, lm := newSession(t, 40, nil)
	turn(t, s, context.Background(), "hi")
	before := slices.Clone(s.Messages())
	_, err := s.Turn(context.Background(), strings.Repeat("y", 40), &strings.Builder{})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "does not fit") {
		t.Fatalf("err = %v, want ErrInput saying it does not fit", err)
	}
	if !slices.Equal(s.Messages(), before) || s.CacheLen() != lm.Len() {
		t.Fatal("a refused message changed the conversation")
	}
	// A message that fits only without the reserve is still answered, as far as room allows.
	res, out := turn(t, s, context.Background(), strings.Repeat("z", 17))
	if res.Reason != ContextFull || lm.Len() != lm.Cap() || res.Dropped != 2 || !strings.HasPrefix(out, "1: zz") {
		t.Fatalf("%q (%s), dropped %d, cache %d/%d; want a cut-off answer filling the cache", out, res.Reason, res.Dropped, lm.Len(), lm.Cap())
	}
}

func TestAnswerFillsTheContext(t *testing.T) {
	s, lm := newSession(t, 64, func(o *Options) { o.Reserve = 1 })
	lm.Reply = func([]string) string { return strings.Repeat("long answer ", 10) }
	res, out := turn(t, s, context.Background(), "talk")
	if res.Reason != ContextFull || lm.Len() != 64 {
		t.Fatalf("%s with %d tokens cached, want context full at 64", res.Reason, lm.Len())
	}
	// The last token sampled is shown even though there is no room to feed it.
	if want := 64 - res.Stats.PromptTokens + 1; len(out) != want {
		t.Fatalf("answer of %d characters, want %d", len(out), want)
	}
}

func TestTemplateErrorIsInputError(t *testing.T) {
	tmpl, err := chat.Compile(`{% if messages[-1]['content'] == 'bad' %}{{ raise_exception('no bad words') }}{% endif %}` + chat.ChatML)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSession(t, 256, func(o *Options) { o.Prompter = TemplatePrompter(tmpl, o.Tokenizer) })
	if _, err := s.Turn(context.Background(), "bad", &strings.Builder{}); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "no bad words") {
		t.Fatalf("err = %v, want ErrInput with the template's message", err)
	}
	if len(s.Messages()) != 0 {
		t.Fatal("the refused message stayed in the conversation")
	}
	if _, out := turn(t, s, context.Background(), "good"); out != "1: good" {
		t.Fatalf("after the error: %q", out)
	}
}

func TestPrompters(t *testing.T) {
	v := chattest.Vocab()
	v.AddBOS = true
	tok := chattest.Tokenizer(v)
	msgs := []chat.Message{{Role: "user", Content: "ab"}}
	// A template that prints bos_token itself: the prompt still has one BOS.
	tmpl, err := chat.Compile("{{ bos_token }}" + chat.ChatML)
	if err != nil {
		t.Fatal(err)
	}
	got, err := TemplatePrompter(tmpl, tok)(msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := tok.EncodePrompt("<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n")
	if !slices.Equal(got, want) || got[0] != 1 || got[1] == 1 {
		t.Fatalf("template prompt %v, want %v (one BOS)", got, want)
	}
	// Raw: the texts concatenated, specials not parsed, BOS in front.
	got, err = RawPrompter(tok)([]chat.Message{{Role: "system", Content: "<|im_end|>"}, {Role: "user", Content: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]int32{1}, tok.Encode("<|im_end|>x", false)...); !slices.Equal(got, want) || len(got) != 12 {
		t.Fatalf("raw prompt %v, want %v", got, want)
	}
	v2 := chattest.Vocab()
	if _, err := RawPrompter(chattest.Tokenizer(v2))([]chat.Message{{Role: "user"}}); err == nil {
		t.Fatal("an empty raw prompt without BOS was accepted")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tok := chattest.Tokenizer(chattest.Vocab())
	e, err := chattest.NewEngine(chattest.NewLM(tok, 16))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	bad := greedy()
	bad.TopP = 0
	for _, tc := range []struct {
		name string
		o    Options
		msg  string
	}{
		{"no engine", Options{Context: 16, Tokenizer: tok, Prompter: RawPrompter(tok), Params: greedy()}, "need Engine"},
		{"no context", Options{Engine: e, Tokenizer: tok, Prompter: RawPrompter(tok), Params: greedy()}, "Context 0"},
		{"bad params", Options{Engine: e, Context: 16, Tokenizer: tok, Prompter: RawPrompter(tok), Params: bad}, "top_p"},
		{"negative reserve", Options{Engine: e, Context: 16, Tokenizer: tok, Prompter: RawPrompter(tok), Params: greedy(), Reserve: -1}, "negative"},
	} {
		if _, err := New(tc.o); err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.msg)) {
			t.Errorf("%s: err = %v, want one mentioning %q", tc.name, err, tc.msg)
		}
	}
}
