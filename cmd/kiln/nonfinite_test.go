package main

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

// TestNonFiniteStopsEveryCommand: a model whose weights hold NaN where
// Load's sampling does not look (embedding rows of some tokens) loads, and
// then every command that runs it fails with an error naming the likely
// cause instead of printing <unk> tokens (generate) or failing to encode
// NaN (probs). A NaN where Load looks (a norm) fails at load.
func TestNonFiniteStopsEveryCommand(t *testing.T) {
	src := testutil.SharedModel(t, "stories260K.gguf")
	const dim = 64 // stories260K: 512 rows of 64 F32 values
	bad := testutil.PatchTensor(t, src, "token_embd.weight", func(b []byte) {
		for row := 7; row < 512; row += 8 { // 407 (" upon") among them
			for j := 0; j < dim; j++ {
				binary.LittleEndian.PutUint32(b[4*(row*dim+j):], math.Float32bits(float32(math.NaN())))
			}
		}
	})
	badNorm := testutil.PatchTensor(t, src, "output_norm.weight", func(b []byte) {
		binary.LittleEndian.PutUint32(b[8:], math.Float32bits(float32(math.Inf(1))))
	})
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"generate", bad, "Once upon a time", "-n", "4"}, "logits at position"},
		{[]string{"probs", bad, "Once upon a time"}, "logits at position"},
		{[]string{"run", bad, "Once upon a time", "-n", "4"}, "logits at position"},
		{[]string{"bench", bad, "--prompt", "16", "--gen", "4"}, "logits at position"},
		{[]string{"generate", badNorm, "Once", "-n", "4"}, "tensor output_norm.weight holds +Inf"},
		{[]string{"run", badNorm, "Once", "-n", "4"}, "tensor output_norm.weight holds +Inf"},
	} {
		out, stderr, code := kilnRun(t, "", tc.args[1:]...)
		if tc.args[0] != "run" {
			out, stderr, code = kiln(t, tc.args...)
		}
		if code != 1 || !strings.Contains(stderr, tc.msg) || !strings.Contains(stderr, "corrupt") {
			t.Errorf("kiln %v: exit %d, stdout %q, stderr %q; want exit 1 saying %q and the likely cause", tc.args[:1], code, out, stderr, tc.msg)
		}
	}
}
