package synth

import (
	"bytes"
	"math"
	"sort"
	"testing"

	"kiln/gguf"
	"kiln/internal/reference"
)

// TestLogitsNotDegenerate runs a deep, narrow synthetic model of each
// architecture through the float64 reference forward pass and checks the
// weight scales keep the next-token distributions useful for comparing
// engines: finite, peaked (top-1 well above uniform) but not one-hot, and
// different from position to position.
func TestLogitsNotDegenerate(t *testing.T) {
	for _, arch := range Architectures {
		t.Run(arch, func(t *testing.T) {
			s := Spec{Arch: arch, Dim: 128, Layers: 24, Heads: 4, KVHeads: 2, FFN: 256, VocabSize: 2000, Tied: arch != "llama"}
			if arch == "qwen3" || arch == "qwen3moe" {
				s.HeadDim = 64
			}
			if arch == "qwen3moe" || arch == "qwen2moe" || arch == "olmoe" {
				s.Experts, s.ExpertsUsed, s.ExpertFFN = 8, 2, 128
			}
			if arch == "olmoe" {
				s.KVHeads, s.FFN = s.Heads, 128 // no GQA; experts FFN wide
			}
			m, err := Plan(s, nil, f32, 11)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := m.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Parse(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			ref, err := reference.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			tokens := []int32{1, 500, 17, 1999, 260, 42, 42, 42, 1024, 7, 300, 301, 302, 1500, 99, 3}
			logits := ref.Logits(tokens)
			var top1, entropy []float64
			argmax := map[int]bool{}
			for pos, l := range logits {
				lp := reference.LogSoftmax(l)
				best, h := 0, 0.0
				for i, x := range lp {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("position %d: log-prob %v for token %d", pos, x, i)
					}
					if x > lp[best] {
						best = i
					}
					h -= math.Exp(x) * x
				}
				argmax[best] = true
				top1 = append(top1, math.Exp(lp[best]))
				entropy = append(entropy, h)
			}
			sort.Float64s(top1)
			sort.Float64s(entropy)
			med := func(x []float64) float64 { return x[len(x)/2] }
			uniform := math.Log(float64(s.VocabSize))
			t.Logf("top-1 p: min %.3f median %.3f max %.3f; entropy median %.2f nats (uniform %.2f); %d distinct argmax",
				top1[0], med(top1), top1[len(top1)-1], med(entropy), uniform, len(argmax))
			if med(top1) < 20.0/float64(s.VocabSize) || top1[len(top1)-1] > 0.995 {
				t.Errorf("top-1 probabilities %.4f..%.4f: too flat or one-hot", top1[0], top1[len(top1)-1])
			}
			if med(entropy) < 0.5 || med(entropy) > uniform-0.5 {
				t.Errorf("median entropy %.2f nats, uniform is %.2f", med(entropy), uniform)
			}
			if len(argmax) < len(tokens)/3 {
				t.Errorf("only %d distinct argmax tokens over %d positions", len(argmax), len(tokens))
			}
		})
	}
}
