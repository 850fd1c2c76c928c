package hub

import "testing"

func TestParseContentRange(t *testing.T) {
	tests := []struct {
		in                string
		start, end, total int64
		ok                bool
	}{
		{"bytes 100-199/200", 100, 199, 200, true},
		{"bytes 0-0/1", 0, 0, 1, true},
		{"bytes 100-199/*", 100, 199, -1, true},
		{"bytes */200", -1, -1, 200, true},
		{" bytes 5-9/10 ", 5, 9, 10, true},
		{"bytes */*", 0, 0, 0, false},
		{"bytes 100-199/150", 0, 0, 0, false}, // end past total
		{"bytes 200-100/300", 0, 0, 0, false},
		{"bytes -1-5/10", 0, 0, 0, false},
		{"bytes 1-5", 0, 0, 0, false},
		{"items 1-5/10", 0, 0, 0, false},
		{"bytes a-b/c", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	}
	for _, tt := range tests {
		s, e, n, err := parseContentRange(tt.in)
		if (err == nil) != tt.ok || tt.ok && (s != tt.start || e != tt.end || n != tt.total) {
			t.Errorf("parseContentRange(%q) = %d, %d, %d, %v", tt.in, s, e, n, err)
		}
	}
}

func TestNextLink(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{`<https://huggingface.co/api/models/o/r/tree/main?recursive=true&cursor=abc>; rel="next"`}, "https://huggingface.co/api/models/o/r/tree/main?recursive=true&cursor=abc"},
		{[]string{`<https://x/prev>; rel="prev", <https://x/next>; rel=next`}, "https://x/next"},
		{[]string{`<https://x/a>; rel="prev"`, `<https://x/b>; REL="Next"`}, "https://x/b"},
		{[]string{`<https://x/a>; rel="last"`}, ""},
		{[]string{`https://x/a; rel="next"`}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := nextLink(tt.in); got != tt.want {
			t.Errorf("nextLink(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeETag(t *testing.T) {
	for in, want := range map[string]string{
		`"ABCDEF0123"`:       "abcdef0123",
		`W/"abc-def"`:        "abc-def",
		` "x" `:              "x",
		``:                   "",
		`"` + sha(nil) + `"`: sha(nil),
	} {
		if got := normalizeETag(in); got != want {
			t.Errorf("normalizeETag(%q) = %q, want %q", in, got, want)
		}
	}
}
