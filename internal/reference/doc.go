// Package reference is a plain float64 forward pass (llama2.c style: one
// sequence, contiguous KV cache, every weight dequantized up front) used only
// by tests as the yardstick for the fast paged, quantized path in package
// model. It favours obviousness over speed: each step is written out once,
// in the order the architecture defines it.
package reference
