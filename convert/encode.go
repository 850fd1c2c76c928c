package convert

import (
	"encoding/binary"
	"fmt"
	"math"

	"kiln/gguf"
	"kiln/quant"
)

// Encode writes src, a whole number of rows of t, as t's bytes into dst
// (len(dst) must be exactly the encoded size): F32 little-endian, F16 and
// BF16 rounded to nearest even, quantized types by ggml's reference
// quantizers (quant.Quantize; what llama-quantize does without an
// importance matrix).
func Encode(t gguf.Type, src []float32, dst []byte) error {
	n, err := t.RowBytes(len(src))
	if err != nil {
		return fmt.Errorf("convert: encode: %w", err)
	}
	if n != len(dst) {
		return fmt.Errorf("convert: encode %d values as %s needs %d bytes, got %d", len(src), t, n, len(dst))
	}
	switch t {
	case gguf.TypeF32:
		for i, x := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
		}
	case gguf.TypeF16:
		for i, x := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], quant.F32ToF16(x))
		}
	case gguf.TypeBF16:
		for i, x := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], quant.F32ToBF16(x))
		}
	default:
		return fmt.Errorf("convert: cannot encode %s yet", t)
	}
	return nil
}
