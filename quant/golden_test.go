package quant

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The golden file holds sha256 sums of llama.cpp's own outputs (its shared
// libraries, run by testdata/ggmlref on the inputs of gen.h; see
// testdata/ggmlref/mkgolden.sh). These tests recompute every output in Go
// and compare. Set KILN_GGMLREF_OUT to the harness's output folder to get
// the first differing byte instead of a hash mismatch.

var updateGolden = flag.Bool("update", false, "rewrite testdata/ggml_golden.txt from the harness outputs in $KILN_GGMLREF_OUT")

const goldenN = 4096 // elements per input set, as N in ggmlref.c

type goldenFmt struct {
	name  string
	qk    int
	bb    int
	q     func([]float32, []byte)
	dq    func([]byte, []float32)
	halfs []int // offsets of f16 fields to sanitize in random blocks; nil = special
}

func goldenFormats() []goldenFmt {
	return []goldenFmt{
		{"f16", 1, 2, quantizeF16, dequantizeF16, nil},
		{"bf16", 1, 2, quantizeBF16, dequantizeBF16, nil},
		{"q4_0", QK4_0, BlockBytesQ4_0, QuantizeQ4_0, DequantizeQ4_0, []int{0}},
		{"q4_1", QK4_1, BlockBytesQ4_1, QuantizeQ4_1, DequantizeQ4_1, []int{0, 2}},
		{"q5_0", QK5_0, BlockBytesQ5_0, QuantizeQ5_0, DequantizeQ5_0, []int{0}},
		{"q5_1", QK5_1, BlockBytesQ5_1, QuantizeQ5_1, DequantizeQ5_1, []int{0, 2}},
		{"q8_0", QK8_0, BlockBytesQ8_0, QuantizeQ8_0, DequantizeQ8_0, []int{0}},
		{"q8_1", QK8_1, BlockBytesQ8_1, QuantizeQ8_1, nil, []int{0, 2}},
		{"q2_K", QK_K, BlockBytesQ2_K, QuantizeQ2_K, DequantizeQ2_K, []int{80, 82}},
		{"q3_K", QK_K, BlockBytesQ3_K, QuantizeQ3_K, DequantizeQ3_K, []int{108}},
		{"q4_K", QK_K, BlockBytesQ4_K, QuantizeQ4_K, DequantizeQ4_K, []int{0, 2}},
		{"q5_K", QK_K, BlockBytesQ5_K, QuantizeQ5_K, DequantizeQ5_K, []int{0, 2}},
		{"q6_K", QK_K, BlockBytesQ6_K, QuantizeQ6_K, DequantizeQ6_K, []int{208}},
		{"q8_K", QK_K, BlockBytesQ8_K, QuantizeQ8_K, DequantizeQ8_K, nil},
		{"act_q8_0", QK8_0, BlockBytesQ8_0, QuantizeActQ8_0, nil, nil},
		{"act_q8_1", QK8_1, BlockBytesQ8_1, QuantizeActQ8_1, nil, nil},
		{"act_q8_K", QK_K, BlockBytesQ8_K, QuantizeActQ8_K, nil, nil},
	}
}

func floatBytes(y []float32) []byte {
	b := make([]byte, 4*len(y))
	for i, f := range y {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// randomBlocks is set 9 of ggmlref.c: random bytes with every scale field
// made finite (exponent all-ones -> clear its top bit).
func randomBlocks(f goldenFmt, k int, nbytes int) []byte {
	r := &splitmix{s: uint64(777 + k)}
	q := make([]byte, nbytes)
	for i := range q {
		q[i] = byte(r.next())
	}
	for b := 0; b < nbytes/f.bb; b++ {
		blk := q[b*f.bb:]
		switch {
		case f.qk == 1:
			h := binary.LittleEndian.Uint16(blk)
			if f.name == "f16" && h&0x7c00 == 0x7c00 {
				h &^= 0x4000
			}
			if f.name == "bf16" && h&0x7f80 == 0x7f80 {
				h &^= 0x4000
			}
			binary.LittleEndian.PutUint16(blk, h)
		case f.name == "q8_K":
			u := binary.LittleEndian.Uint32(blk)
			if u&0x7f800000 == 0x7f800000 {
				u &^= 0x40000000
			}
			binary.LittleEndian.PutUint32(blk, u)
		default:
			for _, off := range f.halfs {
				v := binary.LittleEndian.Uint16(blk[off:])
				if v&0x7c00 == 0x7c00 {
					v &^= 0x4000
				}
				binary.LittleEndian.PutUint16(blk[off:], v)
			}
		}
	}
	return q
}

// goldenOutputs computes, in Go, every output ggmlref writes, keyed like its
// files ("q4_K_3", "dq_q4_K_9").
func goldenOutputs() map[string][]byte {
	out := map[string][]byte{}
	x := make([]float32, goldenN)
	for k, f := range goldenFormats() {
		nbytes := goldenN / f.qk * f.bb
		for set := 0; set < numGenSets; set++ {
			gen(set, 1, x)
			q := make([]byte, nbytes)
			f.q(x, q)
			out[fmt.Sprintf("%s_%d", f.name, set)] = q
			if f.dq != nil {
				y := make([]float32, goldenN)
				f.dq(q, y)
				out[fmt.Sprintf("dq_%s_%d", f.name, set)] = floatBytes(y)
			}
		}
		if f.dq != nil {
			q := randomBlocks(f, k, nbytes)
			out[fmt.Sprintf("%s_9", f.name)] = q
			y := make([]float32, goldenN)
			f.dq(q, y)
			out[fmt.Sprintf("dq_%s_9", f.name)] = floatBytes(y)
		}
	}
	return out
}

func readGolden(t *testing.T) map[string]string {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", "ggml_golden.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("bad golden line %q", line)
		}
		sums[f[0]] = f[1]
	}
	return sums
}

func TestGoldenAgainstLlamaCpp(t *testing.T) {
	got := goldenOutputs()
	refDir := os.Getenv("KILN_GGMLREF_OUT")
	if *updateGolden {
		if refDir == "" {
			t.Fatal("-update needs KILN_GGMLREF_OUT (the ggmlref output folder)")
		}
		var lines []string
		for name := range got {
			want, err := os.ReadFile(filepath.Join(refDir, name+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(want)
			lines = append(lines, name+" "+hex.EncodeToString(sum[:]))
		}
		sort.Strings(lines)
		hdr := "# sha256 of llama.cpp outputs on gen.h inputs; made by testdata/ggmlref (see mkgolden.sh)\n"
		if err := os.WriteFile(filepath.Join("testdata", "ggml_golden.txt"), []byte(hdr+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sums := readGolden(t)
	if len(sums) != len(got) {
		t.Errorf("golden file has %d entries, Go computes %d", len(sums), len(got))
	}
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		b := got[name]
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) == sums[name] {
			continue
		}
		msg := fmt.Sprintf("%s: output differs from llama.cpp", name)
		if refDir != "" {
			if want, err := os.ReadFile(filepath.Join(refDir, name+".bin")); err == nil {
				msg += firstDiff(b, want)
			}
		}
		t.Error(msg)
	}
}

func firstDiff(got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf(" (length %d, want %d)", len(got), len(want))
	}
	n := 0
	first := -1
	for i := range got {
		if got[i] != want[i] {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if first < 0 {
		return ""
	}
	lo := first &^ 15
	hi := min(len(got), lo+32)
	return fmt.Sprintf(" (%d bytes differ, first at %d)\n got  % x\n want % x", n, first, got[lo:hi], want[lo:hi])
}

var _ = bytes.Equal
