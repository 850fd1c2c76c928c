package chatloop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// LineReader reads what the user types, one line at a time. io.EOF means
// the user left (Ctrl-D, or Ctrl-C at the prompt, on a terminal).
// golang.org/x/term's Terminal is one; Lines adapts any io.Reader.
type LineReader interface {
	ReadLine() (string, error)
}

// Lines reads lines from r (a script, a pipe). Each line is echoed to echo
// after prompt, so that the output reads as a transcript; nil echo: none.
func Lines(r io.Reader, echo io.Writer, prompt string) LineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	return &lines{sc: sc, echo: echo, prompt: prompt}
}

type lines struct {
	sc     *bufio.Scanner
	echo   io.Writer
	prompt string
}

func (l *lines) ReadLine() (string, error) {
	if l.echo != nil {
		io.WriteString(l.echo, l.prompt)
	}
	if !l.sc.Scan() {
		if err := l.sc.Err(); err != nil {
			return "", err
		}
		if l.echo != nil {
			io.WriteString(l.echo, "\n")
		}
		return "", io.EOF
	}
	line := strings.TrimSuffix(l.sc.Text(), "\r")
	if l.echo != nil {
		io.WriteString(l.echo, line+"\n")
	}
	return line, nil
}

// REPL chats until the user leaves (/bye, io.EOF from in) or ctx is done:
// each line is a command (/help...) or a message, whose answer streams to
// out followed by a blank line. intr (may be nil) is how Ctrl-C reaches the
// answer in flight: it stops that answer only.
func (s *Session) REPL(ctx context.Context, in LineReader, out io.Writer, intr *Interrupts) error {
	for {
		line, err := in.ReadLine()
		if errors.Is(err, io.EOF) || ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/") {
			quit, err := s.command(line, out)
			if quit || err != nil {
				return err
			}
			continue
		}
		gctx, end := intr.Begin(ctx)
		res, err := s.Turn(gctx, line, out)
		end()
		if errors.Is(err, ErrInput) {
			if _, err := fmt.Fprintf(out, "%s\n\n", strings.TrimPrefix(err.Error(), ErrInput.Error()+": ")); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := s.afterTurn(res, out); err != nil {
			return err
		}
	}
}

// afterTurn ends the answer's line and says what the user should know: an
// interruption, a full context, dropped messages; then the stats.
func (s *Session) afterTurn(res Result, out io.Writer) error {
	var b strings.Builder
	b.WriteString("\n")
	for _, note := range Notes(res) {
		fmt.Fprintf(&b, "(%s)\n", note)
	}
	b.WriteString("\n")
	if _, err := io.WriteString(out, b.String()); err != nil {
		return err
	}
	if s.stats != nil {
		return res.Stats.Report(s.stats)
	}
	return nil
}

// Notes are the remarks a result deserves besides its text.
func Notes(res Result) []string {
	var notes []string
	if res.Dropped > 0 {
		notes = append(notes, fmt.Sprintf("the context is full: the %d oldest messages were left out", res.Dropped))
	}
	switch res.Reason {
	case Interrupted:
		notes = append(notes, "interrupted")
	case ContextFull:
		notes = append(notes, "the context is full: the answer was cut off")
	}
	return notes
}
