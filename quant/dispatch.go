package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"kiln/gguf"
)

// dequantizers maps each supported type to its row expander.
var dequantizers = map[gguf.Type]func(src []byte, dst []float32){
	gguf.TypeF32:  dequantizeF32,
	gguf.TypeF16:  dequantizeF16,
	gguf.TypeBF16: dequantizeBF16,
	gguf.TypeQ4_0: DequantizeQ4_0,
	gguf.TypeQ4_1: DequantizeQ4_1,
	gguf.TypeQ5_0: DequantizeQ5_0,
	gguf.TypeQ5_1: DequantizeQ5_1,
	gguf.TypeQ8_0: DequantizeQ8_0,
	gguf.TypeQ8_1: DequantizeQ8_1,
	gguf.TypeQ2_K: DequantizeQ2_K,
	gguf.TypeQ3_K: DequantizeQ3_K,
	gguf.TypeQ4_K: DequantizeQ4_K,
	gguf.TypeQ5_K: DequantizeQ5_K,
	gguf.TypeQ6_K: DequantizeQ6_K,
	gguf.TypeQ8_K: DequantizeQ8_K,
}

// quantizers maps each supported type to its reference row quantizer.
var quantizers = map[gguf.Type]func(src []float32, dst []byte){
	gguf.TypeF32:  quantizeF32,
	gguf.TypeF16:  quantizeF16,
	gguf.TypeBF16: quantizeBF16,
	gguf.TypeQ4_0: QuantizeQ4_0,
	gguf.TypeQ4_1: QuantizeQ4_1,
	gguf.TypeQ5_0: QuantizeQ5_0,
	gguf.TypeQ5_1: QuantizeQ5_1,
	gguf.TypeQ8_0: QuantizeQ8_0,
	gguf.TypeQ8_1: QuantizeQ8_1,
	gguf.TypeQ2_K: QuantizeQ2_K,
	gguf.TypeQ3_K: QuantizeQ3_K,
	gguf.TypeQ4_K: QuantizeQ4_K,
	gguf.TypeQ5_K: QuantizeQ5_K,
	gguf.TypeQ6_K: QuantizeQ6_K,
	gguf.TypeQ8_K: QuantizeQ8_K,
}

// CanDequantize reports whether Dequantize supports t.
func CanDequantize(t gguf.Type) bool { _, ok := dequantizers[t]; return ok }

// CanQuantize reports whether Quantize supports t.
func CanQuantize(t gguf.Type) bool { _, ok := quantizers[t]; return ok }

// checkLens validates a (bytes, elements) pair for type t.
func checkLens(op string, t gguf.Type, nbytes, nelems int) error {
	bs := t.BlockSize()
	if nelems%bs != 0 {
		return fmt.Errorf("quant: %s %s: %d elements is not a multiple of the block size %d", op, t, nelems, bs)
	}
	want, err := t.RowBytes(nelems)
	if err != nil {
		return fmt.Errorf("quant: %s %s: %w", op, t, err)
	}
	if nbytes != want {
		return fmt.Errorf("quant: %s %s: %d elements take %d bytes, got %d", op, t, nelems, want, nbytes)
	}
	return nil
}

// Dequantize expands src, holding len(dst) elements of type t, into dst.
// len(dst) must be a multiple of t's block size and len(src) exactly
// t.RowBytes(len(dst)); the output is bit-exact with ggml's to_float.
func Dequantize(t gguf.Type, src []byte, dst []float32) error {
	f, ok := dequantizers[t]
	if !ok {
		return fmt.Errorf("quant: dequantize: unsupported type %s", t)
	}
	if err := checkLens("dequantize", t, len(src), len(dst)); err != nil {
		return err
	}
	f(src, dst)
	return nil
}

// Quantize packs src into dst as type t with ggml's reference quantizer
// (bit-exact with llama-quantize without an importance matrix). len(src)
// must be a multiple of t's block size and len(dst) exactly
// t.RowBytes(len(src)). For activations feeding integer dot products use
// QuantizeActQ8_0/QuantizeActQ8_1/QuantizeActQ8_K instead.
func Quantize(t gguf.Type, src []float32, dst []byte) error {
	f, ok := quantizers[t]
	if !ok {
		return fmt.Errorf("quant: quantize: unsupported type %s", t)
	}
	if err := checkLens("quantize", t, len(dst), len(src)); err != nil {
		return err
	}
	f(src, dst)
	return nil
}

// quantizeF32 stores little-endian float32s.
func quantizeF32(src []float32, dst []byte) {
	for i, f := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
	}
}

// quantizeF16 stores little-endian halves (ggml-base's GGML_FP32_TO_FP16:
// nearest even, every NaN as sign|0x7e00).
func quantizeF16(src []float32, dst []byte) {
	for i, f := range src {
		putF16Ref(dst[2*i:], f)
	}
}

// quantizeBF16 stores little-endian bfloat16s (F32ToBF16).
func quantizeBF16(src []float32, dst []byte) {
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(f))
	}
}
