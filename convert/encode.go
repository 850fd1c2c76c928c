package convert

import (
	"fmt"

	"kiln/gguf"
	"kiln/quant"
)

// Encode writes src, a whole number of blocks of t, as t's bytes into dst
// (len(dst) must be exactly the encoded size): F32 little-endian, F16 and
// BF16 rounded to nearest even, quantized types by ggml's reference
// quantizers (what llama-quantize does without an importance matrix).
func Encode(t gguf.Type, src []float32, dst []byte) error {
	if !quant.CanQuantize(t) {
		return fmt.Errorf("convert: cannot write tensors of type %s", t)
	}
	if err := quant.Quantize(t, src, dst); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	return nil
}

// Decode expands src, holding len(dst) values of type t, into dst.
func Decode(t gguf.Type, src []byte, dst []float32) error {
	if !CanDecode(t) {
		return fmt.Errorf("convert: cannot read tensors of type %s", t)
	}
	if err := quant.Dequantize(t, src, dst); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	return nil
}

// CanDecode reports whether tensors of type t can be read as float32.
func CanDecode(t gguf.Type) bool { return quant.CanDequantize(t) }
