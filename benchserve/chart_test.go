package benchserve

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// wellFormed parses svg as XML to the end and returns its text content.
func wellFormed(t *testing.T, svg []byte) string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var text strings.Builder
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element %v, want svg in the SVG namespace", tok.Name)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('|')
		}
	}
	if roots != 1 || depth != 0 {
		t.Fatalf("%d root elements, depth %d at the end", roots, depth)
	}
	return text.String()
}

func sweepResults() []*Result {
	var rs []*Result
	for i, c := range []int{1, 4, 16} {
		r := Summarize(measurement(), []float64{99})
		r.Model, r.MaxConcurrency = "a<b>&c", c
		r.OutputThroughput = float64(10 * (i + 1))
		rs = append(rs, &r)
	}
	return rs
}

func TestSweepChart(t *testing.T) {
	text := wellFormed(t, SweepChart(sweepResults()))
	for _, want := range []string{"a<b>&c", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "output tok/s",
		"max concurrency", "|1|", "|4|", "|16|", "TTFT (ms)", "output tokens/s", "|30|"} {
		if !strings.Contains(text, want) {
			t.Errorf("sweep chart lacks %q in %q", want, text)
		}
	}
	wellFormed(t, SweepChart(nil))
}

func TestRunChart(t *testing.T) {
	r := Summarize(measurement(), []float64{99})
	text := wellFormed(t, RunChart(&r))
	for _, want := range []string{"Inter-token latency (2 gaps)", "inter-token latency (ms)", "p50 30 ms", "p99",
		"Per-request latency (1 completed, 1 failed)", "TTFT", "end-to-end", "latency (ms)"} {
		if !strings.Contains(text, want) {
			t.Errorf("run chart lacks %q in %q", want, text)
		}
	}
	// Degenerate runs still draw: nothing completed; one chunk per request.
	none := Summarize(Measurement{Outputs: []Output{{Error: "refused"}}}, []float64{99})
	if !strings.Contains(wellFormed(t, RunChart(&none)), "no inter-token gaps") {
		t.Error("an all-failed run's chart does not say there are no gaps")
	}
	same := Summarize(measurement(), []float64{99})
	same.ITLs[0] = []float64{0.02, 0.02}
	wellFormed(t, RunChart(&same))
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 97, "0 20 40 60 80 100"},
		{0, 1, "0 0.2 0.4 0.6 0.8 1"},
		{12, 13, "12 12.2 12.4 12.6 12.8 13"},
		{0, 0, "0 1"},
		{5, 5, "2 3 4 5 6 7 8"},
	} {
		var got []string
		for _, v := range niceTicks(tc.lo, tc.hi) {
			got = append(got, tickLabel(v))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("niceTicks(%v, %v) = %s, want %s", tc.lo, tc.hi, g, tc.want)
		}
	}
}
