package benchserve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxLineBytes caps one line of an event stream. A completion chunk is a few
// hundred bytes; a line longer than this is a broken or hostile server, and
// the cap keeps one from growing the client's memory without bound.
const MaxLineBytes = 4 << 20

// ErrLineTooLong is returned by EventReader.Next for a line over MaxLineBytes.
var ErrLineTooLong = errors.New("event stream line longer than 4 MiB")

// Event is one server-sent event: the fields up to a blank line.
type Event struct {
	// Name is the "event:" field ("" for an unnamed event, which the SSE
	// standard calls "message"). llama-server reports a failure inside a
	// stream with an "error:" line rather than "event: error"; that line
	// sets Name to "error" and its value becomes Data.
	Name string
	// Data is the event's "data:" values joined by "\n".
	Data string
}

// EventReader reads a text/event-stream body (the WHATWG HTML "server-sent
// events" format) one event at a time.
//
// Lines end in "\n", "\r\n" or a lone "\r". A line is "field: value" (one
// space after the colon is dropped), "field" alone (empty value), or a
// comment starting with ":" (keep-alive pings), which is skipped. Fields
// "data" (appended), "event" and llama-server's "error" are read; "id",
// "retry" and unknown fields are ignored. A blank line ends an event; an
// event with no data field is not returned. Unlike a browser, the reader
// returns an event whose last line was complete even if the stream ends
// before the blank line, so a server that omits the final blank line after
// "data: [DONE]" is not counted as failing; a line cut off by the end of the
// stream is io.ErrUnexpectedEOF.
type EventReader struct {
	br *bufio.Reader
	// skipLF is set after a line ended in "\r": a "\n" that follows is
	// the rest of a "\r\n" ending, not an empty line. Remembering it,
	// instead of peeking at the next byte, never blocks on the network.
	skipLF bool
	line   []byte
}

// NewEventReader reads events from r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event, or io.EOF at the end of the stream, or the
// read error (io.ErrUnexpectedEOF for a stream cut mid-line, ErrLineTooLong).
func (r *EventReader) Next() (Event, error) {
	var (
		ev      Event
		data    strings.Builder
		hasData bool
	)
	for {
		line, err := r.readLine()
		if err == io.EOF {
			if hasData {
				ev.Data = data.String()
				return ev, nil
			}
			return Event{}, io.EOF
		}
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				ev.Data = data.String()
				return ev, nil
			}
			ev = Event{} // an event without data is dropped, its name too
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "event":
			ev.Name = string(value)
		case "error":
			ev.Name = "error"
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
}

// readLine returns the next line without its ending; the slice is valid
// until the next call. io.EOF means the stream ended cleanly between lines.
func (r *EventReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		c, err := r.br.ReadByte()
		if err == io.EOF {
			if len(r.line) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("event stream cut mid-line: %w", io.ErrUnexpectedEOF)
		}
		if err != nil {
			return nil, err
		}
		if r.skipLF {
			r.skipLF = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			return r.line, nil
		case '\r':
			r.skipLF = true
			return r.line, nil
		}
		if len(r.line) >= MaxLineBytes {
			return nil, ErrLineTooLong
		}
		r.line = append(r.line, c)
	}
}
