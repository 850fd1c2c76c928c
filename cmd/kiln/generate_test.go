package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// storiesGreedy reads the 256 reference greedy ids of stories260K.greedy.txt.
func storiesGreedy(t *testing.T) []int32 {
	fh, err := os.Open(testutil.SharedModel(t, "stories260K.greedy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		var ids []int32
		for _, f := range strings.Fields(line) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, int32(v))
		}
		return ids
	}
	t.Fatal("no ids line")
	return nil
}

// TestGenerateFollowsReferenceGreedy: `kiln generate` (through the engine)
// continues the reference greedy sequence from a long prompt of its own
// first tokens, whatever the block size, with a KV budget that barely
// fits the run, and with n-gram or draft-model speculative decoding (the
// model as its own draft).
func TestGenerateFollowsReferenceGreedy(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	ref := storiesGreedy(t)
	const cut, n = 150, 60
	ids := []string{"1"}
	for _, id := range ref[:cut] {
		ids = append(ids, fmt.Sprint(id))
	}
	prompt := "ids:" + strings.Join(ids, ",")
	// stories260K: 5 layers, 4 KV heads of 8 dims, F16: 640 bytes per token.
	for _, extra := range [][]string{nil, {"--block-size", "7"}, {"--block-size", "1"}, {"--kv-cache-memory", fmt.Sprint(640 * 16 * ((cut + 1 + n + 15) / 16))},
		{"--spec", "ngram", "--num-speculative-tokens", "3"}, {"--spec", "ngram", "--num-speculative-tokens", "8", "--block-size", "7", "--spec-ngram-min", "2"},
		{"--spec", "draft", "--draft", m, "--num-speculative-tokens", "5", "--block-size", "7"}} {
		args := append([]string{"generate", m, prompt, "-n", fmt.Sprint(n), "--json"}, extra...)
		out, stderr, code := kiln(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var got generateOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if !equal(got.Tokens, ref[cut:cut+n]) {
			t.Fatalf("%v: tokens %v\nwant %v", extra, got.Tokens, ref[cut:cut+n])
		}
	}
}

// TestKVPoolFlags: bad --kv-cache-memory and --block-size values are
// refused with exit status 2 and a message that names the flag.
func TestKVPoolFlags(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--kv-cache-memory", "lots"}, `--kv-cache-memory "lots": want a size such as 2GiB`},
		{[]string{"--kv-cache-memory", "-1GiB"}, `--kv-cache-memory "-1GiB"`},
		{[]string{"--kv-cache-memory", "0"}, `--kv-cache-memory "0": want a positive size`},
		{[]string{"--kv-cache-memory", "2GiBs"}, `--kv-cache-memory "2GiBs"`},
		{[]string{"--kv-cache-memory", "1KiB"}, "--kv-cache-memory 1.0KiB holds 0 tokens of this model's KV (16-token blocks of 10240 bytes); this run needs at least 37"},
		{[]string{"--block-size", "0"}, "--block-size 0: want 1 up to 1024"},
		{[]string{"--block-size", "-16"}, "--block-size -16: want 1 up to 1024"},
		{[]string{"--block-size", "4096"}, "--block-size 4096: want 1 up to 1024"},
		{[]string{"--block-size", "x"}, "invalid value"},
	} {
		args := append([]string{"generate", m, "Once upon a time", "-n", "32"}, tc.args...)
		_, stderr, code := kiln(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("kiln %v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.msg)
		}
	}
}

// TestSpecFlags: bad speculative decoding flags are refused with exit
// status 2 and a message that names the flag.
func TestSpecFlags(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--spec", "eagle"}, `--spec "eagle": want ngram or draft`},
		{[]string{"--spec", "draft"}, "--spec draft needs --draft MODEL"},
		{[]string{"--draft", m}, "--draft needs --spec draft"},
		{[]string{"--spec", "ngram", "--draft", m}, "--draft needs --spec draft, not --spec ngram"},
		{[]string{"--spec", "ngram", "--num-speculative-tokens", "0"}, "--num-speculative-tokens 0: want 1 up to 16"},
		{[]string{"--spec", "ngram", "--num-speculative-tokens", "17"}, "--num-speculative-tokens 17: want 1 up to 16"},
		{[]string{"--spec", "ngram", "--spec-ngram-min", "3", "--spec-ngram-max", "2"}, "--spec-ngram-min 3, --spec-ngram-max 2"},
		{[]string{"--spec", "ngram", "--spec-ngram-min", "0"}, "--spec-ngram-min 0"},
		{[]string{"--spec", "ngram", "--spec-max-seqs", "0"}, "--spec-max-seqs 0: want at least 1"},
	} {
		args := append([]string{"generate", m, "Once upon a time", "-n", "8"}, tc.args...)
		_, stderr, code := kiln(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("kiln %v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.msg)
		}
	}
}
