package synth

import (
	"io"
	"testing"

	"kiln/convert"
)

// BenchmarkWrite measures generating and encoding a model's weights (no
// disk): the rate `kiln synth` can reach, in weights per second.
func BenchmarkWrite(b *testing.B) {
	s := Spec{Arch: "llama", Dim: 512, Layers: 2, Heads: 8, KVHeads: 4, FFN: 1536, VocabSize: 4096}
	for _, typ := range []string{"F32", "F16", "Q8_0", "Q4_0", "Q4_K", "Q6_K"} {
		b.Run(typ, func(b *testing.B) {
			sc, err := convert.ParseScheme(typ)
			if err != nil {
				b.Fatal(err)
			}
			m, err := Plan(s, nil, sc, 1)
			if err != nil {
				b.Fatal(err)
			}
			var n float64
			for _, t := range m.Tensors {
				n += float64(t.Rows()) * float64(t.Shape[0])
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := m.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mweights/s")
		})
	}
}
