package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFallbackToChatML(t *testing.T) {
	msgs := []Message{{"user", "Hi"}}
	for _, src := range []string{"", "  \n\t"} {
		tmpl, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		if !tmpl.Fallback || tmpl.Source() != ChatML {
			t.Errorf("Compile(%q): Fallback %v, source %q; want ChatML", src, tmpl.Fallback, tmpl.Source())
		}
		got, err := tmpl.Render(msgs, Options{AddGenerationPrompt: true})
		if want := "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"; err != nil || got != want {
			t.Errorf("fallback render = %q, %v; want %q", got, err, want)
		}
	}
	tmpl, err := Compile("{{ messages[0].content }}")
	if err != nil || tmpl.Fallback {
		t.Errorf("a real template: Fallback %v, err %v", tmpl != nil && tmpl.Fallback, err)
	}
}

func TestErrors(t *testing.T) {
	msgs := []Message{{"user", "Hi"}}
	tests := []struct {
		name string
		src  string
		opts Options
		want string // substring
	}{
		{"unclosed block names its line", "a\n{% if x %}\nb\n{% endfor %}", Options{}, "line 4"},
		{"bad expression names its line", "a\nb\n{{ foo( }}", Options{}, "line 3"},
		{"unknown filter", "{{ 'a' | nosuchfilter }}", Options{}, `unknown filter "nosuchfilter"`},
		{"reserved variable", "x", Options{Vars: map[string]any{"messages": 1}}, `may not set "messages"`},
		{"unsupported variable type", "x", Options{Vars: map[string]any{"f": func() {}}}, "variable f has type func()"},
		{"nested bad variable", "x", Options{Vars: map[string]any{"tools": []any{map[string]any{"a": struct{}{}}}}}, "variable tools[0].a"},
		{"NaN variable", "x", Options{Vars: map[string]any{"t": nanValue()}}, "variable t is NaN"},
		{"bad JSON variable", "x", Options{Vars: map[string]any{"tools": json.RawMessage(`[{"a":}]`)}}, "variable tools: bad JSON"},
		{"trailing JSON", "x", Options{Vars: map[string]any{"tools": json.RawMessage(`[] []`)}}, "data after the value"},
		{"strftime_now arguments", "{{ strftime_now() }}", Options{}, "strftime_now takes one format string"},
	}
	for _, tt := range tests {
		_, err := Render(tt.src, msgs, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "chat: ") {
			t.Errorf("%s: error %v, want one starting \"chat: \" and mentioning %q", tt.name, err, tt.want)
		}
	}
}

func nanValue() float64 { var z float64; return z / z }

func TestRaiseException(t *testing.T) {
	src := "{% if messages[0].role != 'user' %}{{ raise_exception('first turn must be the user\\'s, got ' + messages[0].role) }}{% endif %}ok"
	_, err := Render(src, []Message{{"assistant", "x"}}, Options{})
	var ex *ExceptionError
	if !errors.As(err, &ex) || ex.Message != "first turn must be the user's, got assistant" {
		t.Fatalf("got %v, want an *ExceptionError with the template's message", err)
	}
	if got, err := Render(src, []Message{{"user", "x"}}, Options{}); got != "ok" || err != nil {
		t.Fatalf("no exception path: %q, %v", got, err)
	}
}

func TestVariables(t *testing.T) {
	tests := []struct {
		name string
		src  string
		vars map[string]any
		want string
	}{
		{"bool", "{{ enable_thinking is false }}", map[string]any{"enable_thinking": false}, "True"},
		{"numbers", "{{ a + b }} {{ c }}", map[string]any{"a": 2, "b": int64(3), "c": 0.5}, "5 0.5"},
		{"nil is none", "{{ x is none }}", map[string]any{"x": nil}, "True"},
		{"typed slice", "{{ xs | join(',') }}", map[string]any{"xs": []string{"a", "b"}}, "a,b"},
		{"map keys sorted", "{{ m | tojson }}", map[string]any{"m": map[string]int{"b": 1, "a": 2}}, `{"a": 2, "b": 1}`},
		{"raw JSON keeps key order", "{{ t | tojson }}", map[string]any{"t": json.RawMessage(`{"type":"function","function":{"name":"f","parameters":{}}}`)},
			`{"type": "function", "function": {"name": "f", "parameters": {}}}`},
		{"raw JSON numbers", "{{ t[0] + 1 }} {{ t[1] }} {{ t[2] is none }} {{ t[3] }}", map[string]any{"t": json.RawMessage(`[1, 2.5, null, "s"]`)}, "2 2.5 True s"},
		{"tools and documents default to none", "{{ tools is defined }} {{ tools is none }} {{ documents is none }}", nil, "True True True"},
		{"tools overridable", "{{ tools | length }}", map[string]any{"tools": []any{1, 2}}, "2"},
		{"custom date", "{{ date_string }}", map[string]any{"date_string": "01 Jan 2025"}, "01 Jan 2025"},
	}
	for _, tt := range tests {
		got, err := Render(tt.src, nil, Options{Vars: tt.vars})
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestBoundVariables(t *testing.T) {
	src := "{{ bos_token }}|{{ eos_token }}|{{ add_generation_prompt }}|{{ messages | length }}|{{ messages[0] }}"
	got, err := Render(src, []Message{{"user", "hi"}}, Options{BOS: "<s>", EOS: "</s>", AddGenerationPrompt: true})
	want := `<s>|</s>|True|1|{'role': 'user', 'content': 'hi'}`
	if err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ src, want string }{
		{"abc\n", "abc"},
		{"abc\n\n", "abc\n"},
		{"a\r\nb\r\n", "a\nb"},
		{"a\rb", "a\nb"},
		{"{{ 'x' }}\n", "x"},
		{"{% if true %}x{% endif %}\n", "x"},
	}
	for _, tt := range tests {
		got, err := Render(tt.src, nil, Options{})
		if err != nil || got != tt.want {
			t.Errorf("Render(%q) = %q, %v; want %q (Jinja2 normalises the source)", tt.src, got, err, tt.want)
		}
	}
}

func TestStrftime(t *testing.T) {
	at := time.Date(2025, 3, 7, 9, 5, 3, 0, time.UTC)
	pm := time.Date(2024, 12, 31, 23, 59, 0, 0, time.UTC)
	tests := []struct {
		t      time.Time
		format string
		want   string
	}{
		{at, "%d %b %Y", "07 Mar 2025"},
		{at, "%-d %B %y", "7 March 25"},
		{at, "%a %A %e|%j|%-j", "Fri Friday  7|066|66"},
		{at, "%H:%M:%S %I %p", "09:05:03 09 AM"},
		{pm, "%I:%M %p %m/%-m", "11:59 PM 12/12"},
		{at, "100%% %Q %Z%z", "100% %Q "},
		{at, "%", "%"},
		{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "%I %p", "12 AM"},
	}
	for _, tt := range tests {
		if got := strftime(tt.t, tt.format); got != tt.want {
			t.Errorf("strftime(%q) = %q, want %q", tt.format, got, tt.want)
		}
	}
	got, err := Render(`{{ strftime_now("%d %b %Y") }}`, nil, Options{Now: at})
	if err != nil || got != "07 Mar 2025" {
		t.Errorf("strftime_now with a fixed clock: %q, %v", got, err)
	}
	got, err = Render(`{{ strftime_now("%Y") }}`, nil, Options{})
	if err != nil || got != fmt.Sprint(time.Now().Year()) {
		t.Errorf("strftime_now with the wall clock: %q, %v", got, err)
	}
}

// TestConcurrentRender renders one compiled template from many goroutines
// (run with -race): each render builds its own variables.
func TestConcurrentRender(t *testing.T) {
	tmpl, err := Compile("{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endfor %}{{ ns.n }}")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				msgs := []Message{{"user", fmt.Sprint(g)}, {"assistant", fmt.Sprint(i)}}
				got, err := tmpl.Render(msgs, Options{})
				if want := fmt.Sprintf("%d%d2", g, i); err != nil || got != want {
					t.Errorf("got %q, %v; want %q", got, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func FuzzRender(f *testing.F) {
	f.Add("{% for m in messages %}{{ m.role }}: {{ m.content | trim }}\n{% endfor %}", "hi")
	f.Add(ChatML, "x")
	f.Add("{%- if x %}{{ raise_exception('no') }}{% endif -%}{{ messages[-1]['content'][::-1] }}", "abc")
	f.Add("{% macro m(a) %}{{ a }}{% endmacro %}{{ m(messages|length) }}{{ 'a'.split(',') | tojson }}", "{{")
	f.Fuzz(func(t *testing.T, src, content string) {
		if strings.Contains(src, "range") || strings.Contains(src, "*") { // bound the work one input may ask for
			return
		}
		// Must return (output or error), never panic or hang; and rendering
		// is a pure function of its inputs (no state kept between calls, no
		// map-order leaking into the output): a second render is identical.
		msgs := []Message{{"user", content}, {"assistant", content}}
		out1, err1 := Render(src, msgs, Options{BOS: "<s>"})
		out2, err2 := Render(src, msgs, Options{BOS: "<s>"})
		if out1 != out2 || (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("two renders differ:\n%q, %v\n%q, %v", out1, err1, out2, err2)
		}
	})
}
