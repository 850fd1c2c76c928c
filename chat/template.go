package chat

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// Options are the per-render inputs besides the messages.
type Options struct {
	// AddGenerationPrompt appends the header that opens the assistant's
	// turn (e.g. "<|im_start|>assistant\n"), for generation.
	AddGenerationPrompt bool
	// BOS and EOS are the model's token texts (e.g. "<s>", "</s>"), bound
	// to bos_token and eos_token. Templates that print bos_token expect the
	// tokenizer NOT to add another BOS.
	BOS, EOS string
	// Vars are further template variables: enable_thinking (Qwen3),
	// date_string (Llama 3.1), tools (OpenAI tool schemas, ideally as
	// json.RawMessage to keep key order)... See toValue for the types
	// accepted. The names Render binds itself may not be set here.
	Vars map[string]any
	// Now is the clock strftime_now reads (Llama 3.2 prints today's
	// date); zero means time.Now(). Tests and replays fix it.
	Now time.Time
}

// Template is a compiled chat template, immutable and safe for concurrent
// Render calls.
type Template struct {
	// Fallback is true when the model had no template and ChatML is used
	// in its place; callers should say so (a log line, a warning).
	Fallback bool
	src      string
	tmpl     *jinja.Template
}

// ExceptionError is the failure a template raises itself with
// raise_exception, e.g. "Conversation roles must alternate user/assistant/...".
type ExceptionError struct {
	Message string
}

func (e *ExceptionError) Error() string {
	return "chat: template refused the conversation: " + e.Message
}

// bound are the variables Render sets; Options.Vars may not override them.
var bound = []string{"messages", "add_generation_prompt", "bos_token", "eos_token", "raise_exception", "strftime_now"}

// Compile parses a chat template. An empty (or all-whitespace) source
// means the model ships none: the result renders ChatML, with Fallback set.
func Compile(src string) (*Template, error) {
	t := &Template{src: src}
	if strings.TrimSpace(src) == "" {
		t.src, t.Fallback = ChatML, true
	}
	tmpl, err := compile(normalize(t.src))
	if err != nil {
		return nil, err
	}
	t.tmpl = tmpl
	return t, nil
}

// compile runs the engine's parser, turning a panic into an error.
func compile(src string) (tmpl *jinja.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			tmpl, err = nil, fmt.Errorf("chat: template engine failed while parsing: %v", r)
		}
	}()
	tmpl, err = jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("chat: bad template: %s", strings.TrimPrefix(err.Error(), "jinja "))
	}
	return tmpl, nil
}

// normalize applies what Jinja2's lexer does to a source before anything
// else (defaults: newline_sequence "\n", keep_trailing_newline False):
// every "\r\n" or "\r" becomes "\n", and one trailing "\n" is dropped.
func normalize(src string) string {
	if strings.ContainsRune(src, '\r') {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	return strings.TrimSuffix(src, "\n")
}

// Source returns the template text in use (ChatML for a fallback).
func (t *Template) Source() string { return t.src }

// Render renders the conversation.
func (t *Template) Render(msgs []Message, opts Options) (string, error) {
	data := make(map[string]jinja.Value, 8+len(opts.Vars))
	// transformers passes these two on every call, None when unused:
	// "tools is defined" is true and "tools" is falsy.
	data["tools"] = jinja.None()
	data["documents"] = jinja.None()
	for name, v := range opts.Vars {
		for _, b := range bound {
			if name == b {
				return "", fmt.Errorf("chat: Options.Vars may not set %q: Render binds it", name)
			}
		}
		val, err := toValue(name, v)
		if err != nil {
			return "", err
		}
		data[name] = val
	}
	data["messages"] = messagesValue(msgs)
	data["add_generation_prompt"] = jinja.NewBool(opts.AddGenerationPrompt)
	data["bos_token"] = jinja.NewString(opts.BOS)
	data["eos_token"] = jinja.NewString(opts.EOS)

	var raised *ExceptionError // set by raise_exception, per render
	data["raise_exception"] = jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		msg := "raise_exception called"
		if len(args) > 0 {
			msg = args[0].String() // repr for non-strings, close to Python's str()
			if args[0].IsString() {
				msg = args[0].AsString()
			}
		}
		raised = &ExceptionError{Message: msg}
		return jinja.Undefined(), raised
	})
	now := opts.Now
	data["strftime_now"] = jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if len(args) != 1 || !args[0].IsString() {
			return jinja.Undefined(), errors.New("strftime_now takes one format string")
		}
		clock := now
		if clock.IsZero() {
			clock = time.Now()
		}
		return jinja.NewString(strftime(clock, args[0].AsString())), nil
	})

	out, err := t.render(data)
	if err != nil {
		if raised != nil {
			return "", raised
		}
		return "", fmt.Errorf("chat: rendering template: %w", err)
	}
	return out, nil
}

// render runs the engine, turning a panic into an error.
func (t *Template) render(data map[string]jinja.Value) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("template engine failed: %v", r)
		}
	}()
	return t.tmpl.RenderValues(data)
}

// Render compiles src and renders msgs with it: the one-shot form of
// Compile + Template.Render. An empty src renders ChatML; use Compile to
// learn that it fell back.
func Render(src string, msgs []Message, opts Options) (string, error) {
	t, err := Compile(src)
	if err != nil {
		return "", err
	}
	return t.Render(msgs, opts)
}
