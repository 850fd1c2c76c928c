package sample

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStopMatcher(t *testing.T) {
	tests := []struct {
		name    string
		stops   []string
		pieces  []string
		emits   []string // what each Push returns
		stopped bool     // after the last piece
		matched string
		flush   string
	}{
		{"no stops passes through", nil, []string{"a", "b"}, []string{"a", "b"}, false, "", ""},
		{"whole stop in one piece", []string{"END"}, []string{"abc END def"}, []string{"abc "}, true, "END", ""},
		{"stop split across pieces", []string{"END"}, []string{"abc E", "N", "D tail"},
			[]string{"abc ", "", ""}, true, "END", ""},
		{"false start released", []string{"END"}, []string{"abc E", "NX", "y"},
			[]string{"abc ", "ENX", "y"}, false, "", ""},
		{"held text flushed at the end", []string{"END"}, []string{"xx EN"},
			[]string{"xx "}, false, "", "EN"},
		{"stop over three pieces", []string{"<|end|>"}, []string{"hi<", "|en", "d|>", "more"},
			[]string{"hi", "", "", ""}, true, "<|end|>", ""},
		{"overlapping prefix: aab in aaab", []string{"aab"}, []string{"a", "a", "a", "b"},
			[]string{"", "", "a", ""}, true, "aab", ""},
		{"self-overlapping stop: abab in abaabab", []string{"abab"}, []string{"aba", "aba", "b"},
			[]string{"", "aba", ""}, true, "abab", ""},
		{"earliest of several stops", []string{"world", "lo w"}, []string{"hello world"},
			[]string{"hel"}, true, "lo w", ""},
		{"same start: longer stop wins", []string{"ab", "abc"}, []string{"xabcd"},
			[]string{"x"}, true, "abc", ""},
		{"shorter stop completes first", []string{"abc", "ab"}, []string{"xa", "b", "c"},
			[]string{"x", "", ""}, true, "ab", ""},
		{"hold the longest candidate", []string{"\n\n", "\nUser:"}, []string{"ok\n", "Us", "er", ": hi"},
			[]string{"ok", "", "", ""}, true, "\nUser:", ""},
		{"stop at the very start", []string{"STOP"}, []string{"STOP", "x"}, []string{"", ""}, true, "STOP", ""},
		{"utf-8 stop split inside a character", []string{"終わり"}, []string{"今日は\xe7", "\xb5\x82わ", "り!"},
			[]string{"今日は", "", ""}, true, "終わり", ""},
		{"utf-8 look-alike prefix released", []string{"éa"}, []string{"caf", "é", "!"},
			[]string{"caf", "", "é!"}, false, "", ""},
		{"pushes after the stop return nothing", []string{"x"}, []string{"axb", "ccc"}, []string{"a", ""}, true, "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewStopMatcher(tt.stops)
			var stopped bool
			for i, piece := range tt.pieces {
				var emit string
				emit, stopped = m.Push(piece)
				if emit != tt.emits[i] {
					t.Errorf("Push(%q) #%d emitted %q, want %q", piece, i, emit, tt.emits[i])
				}
			}
			if stopped != tt.stopped || m.Stopped() != tt.stopped {
				t.Errorf("stopped = %v, want %v", stopped, tt.stopped)
			}
			if m.Matched() != tt.matched {
				t.Errorf("matched %q, want %q", m.Matched(), tt.matched)
			}
			if got := m.Flush(); got != tt.flush {
				t.Errorf("Flush = %q, want %q", got, tt.flush)
			}
		})
	}
}

// refStop is the matcher's meaning, recomputed from the whole text after
// every piece: the first piece after which some stop occurs ends the text
// just before the earliest occurrence; with no stop, the whole text.
func refStop(pieces, stops []string) (string, bool) {
	text := ""
	for _, p := range pieces {
		text += p
		at := -1
		for _, s := range stops {
			if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if at >= 0 {
			return text[:at], true
		}
	}
	return text, false
}

func FuzzStopMatcher(f *testing.F) {
	f.Add("hello wor|ld and more", "world", "lo w")
	f.Add("aaab|ab|a", "aab", "abab")
	f.Add("今日は|終わ|り", "終わり", "は終")
	f.Fuzz(func(t *testing.T, stream, stop1, stop2 string) {
		pieces := strings.Split(stream, "|")
		var stops []string
		for _, s := range []string{stop1, stop2} {
			if s != "" && !strings.Contains(s, "|") {
				stops = append(stops, s)
			}
		}
		m := NewStopMatcher(stops)
		var out strings.Builder
		stopped := false
		for _, p := range pieces {
			emit, st := m.Push(p)
			out.WriteString(emit)
			stopped = st
			for _, s := range stops {
				if strings.Contains(out.String(), s) {
					t.Fatalf("emitted %q contains stop %q", out.String(), s)
				}
			}
		}
		out.WriteString(m.Flush())
		want, wantStopped := refStop(pieces, stops)
		if out.String() != want || stopped != wantStopped {
			t.Fatalf("pieces %q stops %q: got %q (stopped %v), want %q (stopped %v)",
				pieces, stops, out.String(), stopped, want, wantStopped)
		}
		if !stopped && utf8.ValidString(stream) && !utf8.ValidString(out.String()) {
			t.Fatalf("valid input gave invalid output %q", out.String())
		}
	})
}
