package benchserve

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzEventReader: any byte stream reads without a panic or a hang, and
// events written back in canonical form ("event:", one "data:" line per
// data line, a blank line) read back the same.
func FuzzEventReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n",
		"data: x\r\n\r\n: ping\r\nevent: error\r\ndata: y\r\n\r\n",
		"error: {\"code\":500}\n\n", "data:a\rdata:b\r\r", "data", "\n\n\n", "data: {\"cut",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		evs, err := readAll(string(in))
		if err != nil {
			return
		}
		var canon strings.Builder
		for _, ev := range evs {
			if strings.ContainsAny(ev.Name, "\r\n") {
				t.Fatalf("event name %q spans lines", ev.Name)
			}
			if ev.Name != "" {
				canon.WriteString("event: " + ev.Name + "\n")
			}
			for l := range strings.SplitSeq(ev.Data, "\n") {
				if strings.Contains(l, "\r") {
					t.Fatalf("data line %q holds a CR", l)
				}
				canon.WriteString("data: " + l + "\n")
			}
			canon.WriteString("\n")
		}
		again, err := readAll(canon.String())
		if err != nil || !reflect.DeepEqual(evs, again) {
			t.Fatalf("round trip: %q -> %q, %v", evs, again, err)
		}
	})
}

// FuzzReadStream: any response body gives a success or a failure, never a
// panic, and a success is consistent: at least one content chunk, one gap
// fewer than chunks, no negative count.
func FuzzReadStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n",
		"data: {\"error\":{\"message\":\"m\"}}\n\n", "error: oops\n\n", "data: [DONE]\n\n", "data: {\"choices\":null}\n\n",
		"data: {\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":-5}}\n\ndata: [DONE]\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var o Output
		err := o.readStream(bytes.NewReader(in), time.Now())
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if o.Chunks < 1 || len(o.ITL) != o.Chunks-1 || o.TTFT < 0 || o.OutputTokens < 0 || o.PromptLen < 0 {
			t.Fatalf("success with %d chunks, %d gaps, TTFT %v", o.Chunks, len(o.ITL), o.TTFT)
		}
		if !o.UsageReported && o.OutputTokens != o.Chunks {
			t.Fatalf("counted %d tokens from %d chunks", o.OutputTokens, o.Chunks)
		}
	})
}

// FuzzParseShareGPT: any file parses or fails cleanly, and every request
// it yields is usable: a text prompt of at least 4 estimated tokens and an
// output length in [4, MaxShareGPTOutput].
func FuzzParseShareGPT(f *testing.F) {
	f.Add([]byte(shareGPTSample), 0)
	f.Add([]byte(`[{"conversations":[{"from":"human","value":"abcdefghijklmnopq"}]}]`), 7)
	f.Add([]byte(`[{"conversations":null},{}]`), 0)
	f.Fuzz(func(t *testing.T, in []byte, outLen int) {
		if outLen < 0 || outLen > 1<<20 {
			return
		}
		reqs, err := ParseShareGPT(bytes.NewReader(in), outLen)
		if err != nil {
			return
		}
		for _, r := range reqs {
			if r.PromptLen < minShareGPTTokens || r.PromptLen != len(r.Text)/4 || r.PromptIDs != nil {
				t.Fatalf("bad prompt %+v", r)
			}
			if outLen > 0 && r.OutputLen != outLen || outLen == 0 && (r.OutputLen < minShareGPTTokens || r.OutputLen > MaxShareGPTOutput) {
				t.Fatalf("bad output length %d (flag %d)", r.OutputLen, outLen)
			}
		}
	})
}
