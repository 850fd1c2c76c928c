package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"kiln/assemble"
	"kiln/chat"
	"kiln/chatloop"
	"kiln/engine"
	"kiln/sample"
	"kiln/tokenizer"
)

func init() {
	register("run", "chat with a model, or stream the answer to one prompt", runRun)
}

// runStdin is where 'kiln run' reads chat lines, or the prompt when none is
// given; tests replace it.
var runStdin io.Reader = os.Stdin

// Sampling defaults are llama-cli's (common_params_sampling), not the
// OpenAI ones of sample.Defaults (temperature 1, no filters): a terminal
// chat wants the tamer distribution llama.cpp and ollama users know.
const (
	runTemperature   = 0.8
	runTopK          = 40
	runTopP          = 0.95
	runMinP          = 0.05
	runRepeatPenalty = 1.0
	runRepeatLastN   = 64
	// runMaxContext caps the default KV cache: models declare up to 128k
	// tokens, which would reserve gigabytes (llama-cli's default is 4096).
	runMaxContext = 4096
	// runPromptChunk is the engine's step budget: prompt tokens per
	// forward, small enough that Ctrl-C stops a long prompt within a
	// fraction of a second, large enough that each weight is read once for
	// many tokens.
	runPromptChunk = 128
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stdout)
	temp := fs.Float64("temperature", runTemperature, "sampling temperature (0: greedy)")
	topK := fs.Int("top-k", runTopK, "keep the K most likely tokens (0: off)")
	topP := fs.Float64("top-p", runTopP, "keep the smallest set of tokens with probability P (1: off)")
	minP := fs.Float64("min-p", runMinP, "drop tokens less likely than P times the most likely (0: off)")
	repeat := fs.Float64("repeat-penalty", runRepeatPenalty, "divide the logits of recent tokens by this (1: off)")
	repeatLastN := fs.Int("repeat-last-n", runRepeatLastN, "how many recent tokens the penalties look at (0: all)")
	presence := fs.Float64("presence-penalty", 0, "subtract this from the logit of every recent token")
	frequency := fs.Float64("frequency-penalty", 0, "subtract this times its count from the logit of every recent token")
	seed := fs.Int64("seed", -1, "random seed, for replays (-1: a fresh one)")
	var maxTokens int
	fs.IntVar(&maxTokens, "n", -1, "most tokens per answer, a positive count (-1: until the end of the turn or a full context)")
	fs.IntVar(&maxTokens, "max-tokens", -1, "same as -n")
	var stops stringList
	fs.Var(&stops, "stop", "stop when the answer produces this text, which is not printed (repeatable)")
	raw := fs.Bool("raw", false, "feed the text as is, without the chat template (the default for models without one)")
	system := fs.String("system", "", "system message")
	chatTemplate := addChatTemplateFlag(fs)
	interactive := fs.Bool("i", false, "chat even when stdin is not a terminal, reading lines from it (after PROMPT, if given)")
	verbose := fs.Bool("verbose", false, "after each answer, print token counts, rates and durations to stderr")
	ctxSize := fs.Int("ctx", 0, fmt.Sprintf("context size in tokens (0: the model's, at most %d)", runMaxContext))
	threads := fs.Int("threads", 0, "worker threads (0: one per core)")
	lt := loadTypeFlags(fs)
	kvTypeOf := kvTypeFlag(fs)
	kvf := addKVPoolFlags(fs)
	sf := addSpecFlags(fs)
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: kiln run MODEL [PROMPT] [flags]
  With PROMPT (or, when stdin is not a terminal, the text read from it), stream
  the answer and exit. Without, chat: /help lists the commands; Ctrl-C stops an
  answer, Ctrl-D or /bye leaves. MODEL is a .gguf path, an hf: reference, or a
  Hugging Face folder (--type quantizes it on load, as kiln convert --type).
  A PROMPT that begins with - goes after --, which quotes only the next
  argument: flags may follow it (kiln run MODEL -- "-5 apples" -n 5).
`)
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("want MODEL [PROMPT]")
	}
	templateSrc, err := chatTemplateSource(*chatTemplate)
	if err != nil {
		return err
	}
	params, err := runParams(*temp, *topK, *topP, *minP, *repeat, *repeatLastN, *presence, *frequency, *seed, maxTokens, stops)
	if err != nil {
		return err
	}
	if err := checkThreads(*threads); err != nil {
		return err
	}
	if *ctxSize < 0 {
		return usageErrorf("--ctx must not be negative")
	}
	kvType, err := kvTypeOf()
	if err != nil {
		return err
	}
	if err := kvf.check(); err != nil {
		return err
	}
	if err := sf.check(); err != nil {
		return err
	}
	scheme, err := lt.scheme()
	if err != nil {
		return err
	}

	// What to do: one answer (PROMPT or piped stdin), a chat, or both (-i PROMPT).
	prompt := strings.Join(pos[1:], " ")
	stdinTerm := false
	if f, ok := runStdin.(*os.File); ok {
		stdinTerm = term.IsTerminal(int(f.Fd()))
	}
	chatting := *interactive || (len(pos) == 1 && stdinTerm)
	if len(pos) == 1 && !chatting {
		in, err := io.ReadAll(runStdin)
		if err != nil {
			return err
		}
		if prompt = strings.TrimRight(string(in), "\r\n"); prompt == "" {
			return usageErrorf("no PROMPT and nothing on stdin")
		}
	}

	// Ctrl-C stops the answer in flight; otherwise it ends the command,
	// and a second one kills it (signal.Reset) if something does not notice.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var intr chatloop.Interrupts
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer func() { signal.Stop(sig); close(sig) }() // Stop guarantees no more sends
	go func() {
		for range sig {
			if !intr.Interrupt() {
				cancel()
				signal.Reset(os.Interrupt)
			}
		}
	}()

	path, err := resolveModel(pos[0], stderr)
	if err != nil {
		return err
	}
	if err := checkType(path, scheme); err != nil {
		return err
	}
	t0 := time.Now()
	end := loadNotice(stderr, path)
	a, err := loadModel(assemble.Options{Model: path, Scheme: scheme, Draft: sf.draftPath(), Threads: *threads}, stderr)
	end()
	if err != nil {
		return err
	}
	defer a.Close()
	c := &a.Model.Config
	n := *ctxSize
	if n == 0 {
		n = min(c.Context, runMaxContext)
	}
	if n > c.Context {
		return usageErrorf("--ctx: %d tokens exceed the model's context of %d", n, c.Context)
	}
	// One conversation: its n tokens of KV and the last answer token,
	// which needs none (chatloop.Engine).
	e, err := startEngine(a, kvf.kv(n+1, 1), engine.Config{KVType: kvType, MaxSeqs: 1, Spec: sf.resolved,
		MaxModelLen: n + 1, MaxBatchedTokens: runPromptChunk, Tokenizer: a.Tokenizer})
	if err != nil {
		return err
	}
	load := time.Since(t0)
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}

	prompter, how, err := runPrompter(a.Tokenizer, templateSrc, *raw, chatting)
	if err != nil {
		return err
	}
	if how != "" {
		fmt.Fprintf(stderr, "kiln run: %s\n", how)
	}
	opts := chatloop.Options{Engine: e, Context: n, Tokenizer: a.Tokenizer, Prompter: prompter, Params: params, System: *system, Load: load}
	if *verbose {
		opts.Stats = stderr
	}
	s, err := chatloop.New(opts)
	if err != nil {
		return err
	}

	if prompt != "" {
		if err := runOnce(ctx, s, &intr, prompt, stdout, stderr, *verbose, chatting); err != nil || !chatting {
			return err
		}
	}
	fmt.Fprintf(stderr, "kiln run: %s, %d-token context. /help for commands, /bye or Ctrl-D to leave.\n", filepath.Base(path), n)
	var lines chatloop.LineReader
	if f, ok := runStdin.(*os.File); ok && stdinTerm {
		lines = newTermLines(f, stdout)
	} else {
		lines = chatloop.Lines(runStdin, stdout, ">>> ")
	}
	err = s.REPL(ctx, lines, stdout, &intr)
	if stdinTerm {
		fmt.Fprintln(stdout)
	}
	return err
}

// runParams turns the sampling flags into validated parameters (a usage
// error, exit status 2, when they are not).
func runParams(temp float64, topK int, topP, minP, repeat float64, lastN int, presence, frequency float64, seed int64, maxTokens int, stops []string) (sample.Params, error) {
	p := sample.Defaults()
	p.Temperature, p.TopK, p.TopP, p.MinP = float32(temp), topK, float32(topP), float32(minP)
	p.RepetitionPenalty, p.PenaltyLastN = float32(repeat), lastN
	p.PresencePenalty, p.FrequencyPenalty = float32(presence), float32(frequency)
	p.Stop = stops
	if err := checkMaxTokens(maxTokens, false); err != nil {
		return p, err
	}
	p.MaxTokens = max(0, maxTokens) // sample's 0 is no limit
	switch {
	case seed >= 0:
		u := uint64(seed)
		p.Seed = &u
	case seed != -1:
		return p, usageErrorf("--seed %d: want a non-negative seed, or -1 for a fresh one", seed)
	}
	if err := p.Validate(); err != nil {
		return p, usageErrorf("%v", err)
	}
	return p, nil
}

// runPrompter picks how a conversation becomes tokens: --chat-template's
// source (templateSrc) or the model's chat template, or raw text with --raw
// and for models without a template (kiln serve renders ChatML there: a
// chat endpoint needs roles, a terminal continuing a base model's text does
// not). note says which when that is worth telling (once, on stderr).
func runPrompter(tok *tokenizer.Tokenizer, templateSrc string, raw, chatting bool) (p chatloop.Prompter, note string, err error) {
	src := tok.Vocab().ChatTemplate
	if templateSrc != "" {
		src = templateSrc
	}
	switch {
	case raw:
		return chatloop.RawPrompter(tok), "", nil
	case strings.TrimSpace(src) == "":
		note = noTemplateNote("the prompt is fed as raw text, as with --raw")
		if chatting {
			note = noTemplateNote("the text is fed raw, each line continuing it, as with --raw")
		}
		return chatloop.RawPrompter(tok), note, nil
	}
	t, err := chat.Compile(src)
	if err != nil {
		return nil, "", fmt.Errorf("the model's chat template: %w (--raw skips it)", err)
	}
	return chatloop.TemplatePrompter(t, tok), "", nil
}

// runOnce answers one prompt: the answer streams to stdout, notes and
// stats go to stderr. An interrupted answer is an error unless a chat
// follows.
func runOnce(ctx context.Context, s *chatloop.Session, intr *chatloop.Interrupts, prompt string, stdout, stderr io.Writer, verbose, chatting bool) error {
	gctx, end := intr.Begin(ctx)
	res, err := s.Turn(gctx, prompt, stdout)
	end()
	if errors.Is(err, chatloop.ErrInput) {
		return errors.New(strings.TrimPrefix(err.Error(), chatloop.ErrInput.Error()+": "))
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if chatting {
		fmt.Fprintln(stdout)
	}
	stopped := res.Reason == chatloop.Interrupted && !chatting
	for _, note := range chatloop.Notes(res) {
		if !stopped || note != "interrupted" { // said by the error below
			fmt.Fprintf(stderr, "kiln run: %s\n", note)
		}
	}
	if verbose {
		res.Stats.Report(stderr)
	}
	if stopped {
		return errors.New("interrupted")
	}
	return nil
}

// termLines reads chat lines from a terminal with line editing and history
// (golang.org/x/term). The terminal is in raw mode only while a line is
// read, so that Ctrl-C during an answer is a SIGINT (which stops the answer)
// while Ctrl-C or Ctrl-D at the prompt ends ReadLine with io.EOF.
type termLines struct {
	fd int
	t  *term.Terminal
}

func newTermLines(in *os.File, out io.Writer) *termLines {
	rw := struct {
		io.Reader
		io.Writer
	}{in, out}
	return &termLines{fd: int(in.Fd()), t: term.NewTerminal(rw, ">>> ")}
}

func (l *termLines) ReadLine() (string, error) {
	old, err := term.MakeRaw(l.fd)
	if err != nil {
		return "", err
	}
	defer term.Restore(l.fd, old)
	if w, h, err := term.GetSize(l.fd); err == nil && w > 0 && h > 0 { // a fresh pty may report 0x0
		l.t.SetSize(w, h)
	}
	return l.t.ReadLine()
}
