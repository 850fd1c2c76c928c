package benchserve

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func readAll(s string) ([]Event, error) {
	r := NewEventReader(strings.NewReader(s))
	var evs []Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestEventReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Event
	}{
		{"two events", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []Event{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{"CRLF", "data: x\r\n\r\ndata: y\r\n\r\n", []Event{{Data: "x"}, {Data: "y"}}},
		{"lone CR", "data: x\r\rdata: y\r\r", []Event{{Data: "x"}, {Data: "y"}}},
		{"no space", "data:x\n\n", []Event{{Data: "x"}}},
		{"two spaces keep one", "data:  x\n\n", []Event{{Data: " x"}}},
		{"multi-line data", "data: a\ndata: b\n\n", []Event{{Data: "a\nb"}}},
		{"comments and pings", ": ping\n\n: keep-alive\ndata: x\n\n", []Event{{Data: "x"}}},
		{"named event", "event: error\ndata: {\"message\":\"m\"}\n\n", []Event{{Name: "error", Data: `{"message":"m"}`}}},
		{"llama-server error line", "error: {\"code\":500}\n\n", []Event{{Name: "error", Data: `{"code":500}`}}},
		{"id and retry ignored", "id: 7\nretry: 100\ndata: x\n\n", []Event{{Data: "x"}}},
		{"field without colon", "data\n\n", []Event{{Data: ""}}},
		{"event without data dropped", "event: ping\n\ndata: x\n\n", []Event{{Data: "x"}}},
		{"no final blank line", "data: x\n\ndata: [DONE]\n", []Event{{Data: "x"}, {Data: "[DONE]"}}},
		{"blank lines between", "\n\n\ndata: x\n\n\n", []Event{{Data: "x"}}},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []Event{{Data: `{"a":"b:c"}`}}},
	} {
		got, err := readAll(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestEventReaderErrors(t *testing.T) {
	if _, err := readAll("data: x\n\ndata: {\"cut"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut mid-line: %v, want unexpected EOF", err)
	}
	long := "data: " + strings.Repeat("x", MaxLineBytes) + "\n\n"
	if _, err := readAll(long); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("long line: %v, want ErrLineTooLong", err)
	}
	if evs, err := readAll(""); err != nil || len(evs) != 0 {
		t.Errorf("empty stream: %v, %v", evs, err)
	}
}
