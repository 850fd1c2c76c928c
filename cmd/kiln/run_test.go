package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kiln/chatloop/chattest"
	"kiln/convert"
	"kiln/internal/testutil"
	"kiln/synth"
)

// storiesGreedy64 is llama.cpp's greedy continuation of "Once upon a time"
// by stories260K, recorded with:
//
//	node /tmp/oracle/llamacpp.mjs greedy ../shared/models/stories260K.gguf "Once upon a time" -n 64
const storiesGreedy64 = ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high.\nLily's mom said"

// kilnRun runs 'kiln run' in-process with stdin read from in.
func kilnRun(t *testing.T, in string, args ...string) (string, string, int) {
	t.Helper()
	old := runStdin
	runStdin = strings.NewReader(in)
	defer func() { runStdin = old }()
	return kiln(t, append([]string{"run"}, args...)...)
}

func TestRunStoriesMatchesLlamaCpp(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	out, stderr, code := kilnRun(t, "", m, "Once upon a time", "--temperature", "0", "-n", "64")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if out != storiesGreedy64+"\n" {
		t.Fatalf("stdout %q\nwant     %q", out, storiesGreedy64+"\n")
	}
	if n := strings.Count(stderr, "no chat template"); n != 1 {
		t.Fatalf("stderr says %d times that the model has no template, want once:\n%s", n, stderr)
	}
}

// TestRunSpec: n-gram speculative decoding changes no token, greedy
// (llama.cpp's reference) or seeded sampling, and ends at stops alike.
func TestRunSpec(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	spec := []string{"--spec", "ngram", "--num-speculative-tokens", "5"}
	out, stderr, code := kilnRun(t, "", append([]string{m, "Once upon a time", "--temperature", "0", "-n", "64"}, spec...)...)
	if code != 0 || out != storiesGreedy64+"\n" {
		t.Fatalf("greedy with speculation: exit %d, stdout %q\nwant %q\n%s", code, out, storiesGreedy64+"\n", stderr)
	}
	for _, args := range [][]string{
		{"Once upon a time", "--temperature", "0.8", "--seed", "5", "-n", "150"},
		{"Once upon a time", "--temperature", "0.7", "--top-k", "20", "--seed", "9", "-n", "120", "--stop", "mom"},
	} {
		args = append([]string{m}, args...)
		want, _, code0 := kilnRun(t, "", args...)
		got, stderr, code1 := kilnRun(t, "", append(args, spec...)...)
		if code0 != 0 || code1 != 0 || got != want {
			t.Errorf("%v: exit %d/%d, with speculation %q\nwithout %q\n%s", args, code0, code1, got, want, stderr)
		}
	}
}

func TestRunStopsAndLimits(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	for _, tc := range []struct {
		name string
		args []string
		in   string
		want string
	}{
		{"stop string", []string{"--stop", "Lily"}, "", ", there was a little girl named "},
		{"earliest of two stops", []string{"--stop", "park", "--stop", "girl"}, "", ", there was a little "},
		{"stop across tokens", []string{"--stop", "e was a"}, "", ", ther"},
		{"max tokens", []string{"-n", "5"}, "", ", there was a little"},
		{"max tokens, long name", []string{"--max-tokens", "2"}, "", ", there"},
		{"prompt from stdin", []string{"-n", "5"}, "Once upon a time\n", ", there was a little"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{m}
			if tc.in == "" {
				args = append(args, "Once upon a time")
			}
			args = append(args, "--temperature", "0")
			out, stderr, code := kilnRun(t, tc.in, append(args, tc.args...)...)
			if code != 0 || out != tc.want+"\n" {
				t.Fatalf("exit %d, stdout %q, want %q\n%s", code, out, tc.want+"\n", stderr)
			}
			if !strings.HasPrefix(storiesGreedy64, tc.want) {
				t.Fatal("the expectation is not a prefix of the greedy text")
			}
		})
	}
}

// chatModel writes a random-weight qwen2 model whose vocabulary is
// chattest's: one token per character, ChatML specials and the ChatML
// template in its metadata (a few hundred kilobytes, milliseconds).
func chatModel(t *testing.T) string {
	t.Helper()
	v := chattest.Vocab()
	sv := &synth.Vocab{KV: v.Metadata(), Size: v.Size(), Source: "chattest"}
	scheme, err := convert.ParseScheme("F32")
	if err != nil {
		t.Fatal(err)
	}
	m, err := synth.Plan(synth.Spec{Arch: "qwen2", Dim: 32, Layers: 2, Heads: 4, KVHeads: 2, FFN: 64, Ctx: 512}, sv, scheme, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chat.gguf")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

var evalCount = regexp.MustCompile(`prompt eval count:\s+(\d+) token\(s\)(?: \(\+(\d+) cached\))?`)

// promptCounts returns the prompt eval counts (fed, cached) of each answer in a --verbose stderr.
func promptCounts(stderr string) [][2]int {
	var out [][2]int
	for _, m := range evalCount.FindAllStringSubmatch(stderr, -1) {
		var fed, cached int
		fmt.Sscan(m[1], &fed)
		if m[2] != "" {
			fmt.Sscan(m[2], &cached)
		}
		out = append(out, [2]int{fed, cached})
	}
	return out
}

func TestRunUsesTheChatTemplate(t *testing.T) {
	m := chatModel(t)
	tok := chattest.Tokenizer(chattest.Vocab())
	templated := len(tok.EncodePrompt("<|im_start|>system\nbe nice<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"))
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"template", []string{"--system", "be nice"}, templated},
		{"raw", []string{"--raw"}, len("hello")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := kilnRun(t, "", append([]string{m, "hello", "-n", "3", "--verbose", "--seed", "1"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := promptCounts(stderr); len(got) != 1 || got[0][0] != tc.want {
				t.Fatalf("prompt counts %v, want %d tokens fed\n%s", got, tc.want, stderr)
			}
			if strings.Contains(stderr, "no chat template") || !strings.HasSuffix(out, "\n") {
				t.Fatalf("stdout %q stderr %s", out, stderr)
			}
		})
	}
}

func TestRunInteractive(t *testing.T) {
	m := chatModel(t)
	script := "/set temperature 0\nhello\n/show\n/clear\nhello\nwhat now\n/bye\nunread\n"
	tok := chattest.Tokenizer(chattest.Vocab())
	prompt := len(tok.EncodePrompt("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"))
	for _, bs := range []int{16, 1} {
		out, stderr, code := kilnRun(t, script, m, "-i", "-n", "6", "--verbose", "--system", "S", "--block-size", fmt.Sprint(bs))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		// Each answer is on the line after its ">>> message" line.
		answers := map[string][]string{}
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			if msg, ok := strings.CutPrefix(l, ">>> "); ok && !strings.HasPrefix(msg, "/") && i+1 < len(lines) {
				answers[msg] = append(answers[msg], lines[i+1])
			}
		}
		if len(answers["hello"]) != 2 || answers["hello"][0] != answers["hello"][1] || len(answers["what now"]) != 1 {
			t.Fatalf("answers %q: want the same greedy answer to hello before and after /clear\n%s", answers, out)
		}
		for _, want := range []string{"Set temperature.\n", "temperature     0\n", "system          \"S\"\n", "Cleared the conversation.\n", ">>> /bye\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("transcript lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "unread") {
			t.Error("a line after /bye was read")
		}
		// After /clear, the engine's prefix cache still holds the first
		// turn: the same prompt is served from it but for its last token
		// (whole blocks, and the first turn's partial last block copied),
		// and the next turn computes only what follows the answer it kept.
		got := promptCounts(stderr)
		if len(got) != 3 || got[0] != [2]int{prompt, 0} || got[1] != [2]int{1, prompt - 1} || got[2][1] < prompt {
			t.Fatalf("block size %d: prompt counts (fed, cached) %v; want [%d 0], [1 %d], then at least %d cached", bs, got, prompt, prompt-1, prompt)
		}
	}
}

func TestRunPromptThenChat(t *testing.T) {
	m := chatModel(t)
	out, stderr, code := kilnRun(t, "/show\n", m, "first", "-i", "-n", "3", "--seed", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The PROMPT's answer comes first, then the chat, which sees it.
	answer, rest, ok := strings.Cut(out, "\n\n>>> /show\n")
	if !ok || answer == "" || strings.Contains(answer, ">>>") || !strings.Contains(rest, "conversation    2 messages") {
		t.Fatalf("transcript:\n%s", out)
	}
}

func TestRunContextLimits(t *testing.T) {
	m := chatModel(t)
	// A prompt longer than the context is refused, not crashed on.
	_, stderr, code := kilnRun(t, "", m, strings.Repeat("x", 80), "--ctx", "64")
	if code != 1 || !strings.Contains(stderr, "does not fit") {
		t.Fatalf("exit %d, stderr %q; want exit 1 saying it does not fit", code, stderr)
	}
	// A chat that outgrows its context drops old turns and goes on.
	script := strings.Repeat("tell me more about it\n", 6)
	out, stderr, code := kilnRun(t, script, m, "-i", "--ctx", "96", "-n", "24", "--temperature", "0")
	if code != 0 || !strings.Contains(out, "oldest messages were left out") {
		t.Fatalf("exit %d; want a note about dropped messages:\n%s\n%s", code, out, stderr)
	}
	if n := strings.Count(out, ">>> tell me more about it\n"); n != 6 {
		t.Fatalf("%d of 6 messages answered:\n%s", n, out)
	}
}

func TestRunErrors(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{}, 2, "want MODEL"},
		{[]string{m, "hi", "--temperature", "-1"}, 2, "sample: temperature"},
		{[]string{m, "hi", "--top-p", "0"}, 2, "sample: top_p"},
		{[]string{m, "hi", "--top-k", "-2"}, 2, "sample: top_k"},
		{[]string{m, "hi", "--min-p", "1.5"}, 2, "sample: min_p"},
		{[]string{m, "hi", "--repeat-penalty", "0"}, 2, "sample: "},
		{[]string{m, "hi", "--presence-penalty", "3"}, 2, "sample: "},
		{[]string{m, "hi", "--stop", ""}, 2, "sample: "},
		{[]string{m, "hi", "--seed", "-7"}, 2, "--seed -7"},
		{[]string{m, "hi", "-n", "-3"}, 2, "-n -3"},
		{[]string{m, "hi", "--ctx", "-1"}, 2, "--ctx"},
		{[]string{m, "hi", "--ctx", "100000"}, 2, "exceed the model's context"},
		{[]string{m, "hi", "--kv-type", "q8"}, 2, "--kv-type"},
		{[]string{m, "hi", "--kv-cache-dtype", "q5_1"}, 2, "want one of f16, f32, q8_0, q4_0"},
		// stories260K's heads are 8 wide; q8_0 blocks are 32 (llama.cpp refuses it too).
		{[]string{m, "hi", "--kv-cache-dtype", "q8_0"}, 1, "heads are 8 wide (not a multiple of 32)"},
		{[]string{m}, 2, "nothing on stdin"},
		{[]string{"/nonexistent.gguf", "hi"}, 1, "nonexistent"},
	} {
		_, stderr, code := kilnRun(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("kiln run %v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}
