package chatloop

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

const help = `commands:
  /set temperature X     sampling temperature (0 = greedy)
  /set top_k N           keep the N most likely tokens (0 = off)
  /set top_p X           keep the nucleus of probability X (1 = off)
  /set min_p X           drop tokens less likely than X times the best (0 = off)
  /set repeat_penalty X  penalize repeated tokens (1 = off)
  /set seed N            replay sampling from seed N ("random" for a fresh one)
  /set system TEXT       the system message ("/set system" alone removes it)
  /show                  the parameters and the conversation's size
  /clear                 forget the conversation (the system message stays)
  /help                  this list
  /bye                   exit (as do Ctrl-D and Ctrl-C at the prompt)
Ctrl-C while the model answers stops the answer; what it wrote so far stays in the conversation.
`

// command runs one slash command, writing its reply to out, and reports
// whether it asks to leave the chat.
func (s *Session) command(line string, out io.Writer) (quit bool, err error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	rest = strings.TrimSpace(rest)
	switch name {
	case "/bye", "/exit":
		return true, nil
	case "/help", "/?":
		_, err = io.WriteString(out, help)
	case "/clear":
		s.Clear()
		_, err = io.WriteString(out, "Cleared the conversation.\n")
	case "/show":
		err = s.show(out)
	case "/set":
		set, err := s.set(rest)
		if err != nil {
			_, werr := fmt.Fprintf(out, "%v\n", strings.TrimPrefix(err.Error(), ErrInput.Error()+": "))
			return false, werr
		}
		_, err = fmt.Fprintf(out, "Set %s.\n", set)
	default:
		_, err = fmt.Fprintf(out, "Unknown command %s: /help lists the commands.\n", name)
	}
	return false, err
}

// set applies "/set NAME VALUE"; ollama's "/set parameter NAME VALUE" is
// accepted too. It returns the name set; bad values are an ErrInput and
// change nothing.
func (s *Session) set(arg string) (string, error) {
	name, value, _ := strings.Cut(arg, " ")
	value = strings.TrimSpace(value)
	if name == "parameter" {
		name, value, _ = strings.Cut(value, " ")
		value = strings.TrimSpace(value)
	}
	if name == "system" {
		s.SetSystem(value)
		return name, nil
	}
	if name == "" || value == "" {
		return "", inputErrorf("usage: /set NAME VALUE (/help lists the names)")
	}
	p := s.params
	num := func() (float32, error) {
		x, err := strconv.ParseFloat(value, 32)
		if err != nil {
			return 0, inputErrorf("%s: %q is not a number", name, value)
		}
		return float32(x), nil
	}
	var err error
	switch name {
	case "temperature":
		p.Temperature, err = num()
	case "top_p":
		p.TopP, err = num()
	case "min_p":
		p.MinP, err = num()
	case "repeat_penalty":
		p.RepetitionPenalty, err = num()
	case "top_k":
		p.TopK, err = strconv.Atoi(value)
		if err != nil {
			err = inputErrorf("top_k: %q is not an integer", value)
		}
	case "seed":
		if value == "random" || value == "-1" {
			p.Seed = nil
			break
		}
		var seed uint64
		if seed, err = strconv.ParseUint(value, 10, 64); err != nil {
			err = inputErrorf("seed: %q is not a non-negative integer (or \"random\")", value)
		}
		p.Seed = &seed
	default:
		return "", inputErrorf("unknown parameter %q (/help lists them)", name)
	}
	if err == nil {
		err = s.SetParams(p)
	}
	return name, err
}

// show writes the parameters, the system message and the conversation's size.
func (s *Session) show(out io.Writer) error {
	p := s.params
	seed := "random (" + strconv.FormatUint(s.Seed(), 10) + ")"
	if p.Seed != nil {
		seed = strconv.FormatUint(*p.Seed, 10)
	}
	maxTokens := "unlimited"
	if p.MaxTokens > 0 {
		maxTokens = strconv.Itoa(p.MaxTokens)
	}
	system := "(none)"
	if s.system != "" {
		system = strconv.Quote(s.system)
	}
	// After /clear the engine's cache still holds the old turns, for the
	// next turn to reuse their common prefix, but none of it is the
	// conversation.
	inUse := len(s.cached)
	if len(s.msgs) == 0 {
		inUse = 0
	}
	_, err := fmt.Fprintf(out, "temperature     %g\ntop_k           %d\ntop_p           %g\nmin_p           %g\nrepeat_penalty  %g (last %d tokens)\npresence        %g\nfrequency       %g\nseed            %s\nmax_tokens      %s\nstop            %q\nsystem          %s\nconversation    %d messages, %d of %d context tokens in use\n",
		p.Temperature, p.TopK, p.TopP, p.MinP, p.RepetitionPenalty, p.PenaltyLastN, p.PresencePenalty, p.FrequencyPenalty,
		seed, maxTokens, p.Stop, system, len(s.msgs), inUse, s.capacity)
	return err
}
