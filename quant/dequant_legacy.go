package quant

import "encoding/binary"

// Dequantizers of the 32-element formats, bit-exact with ggml's
// dequantize_row_* (ggml-quants.c). Each takes whole blocks: len(dst) must be
// a multiple of 32 and len(src) exactly len(dst)/32 blocks, else it panics
// (see blocks). Products that ggml adds to a min are rounded to float32
// before the add (float32(q*d) + m), which keeps Go from fusing them into an
// FMA on platforms where it may; ggml-base is compiled without FMA.

// DequantizeQ4_0 expands Q4_0 blocks: y = (q - 8) * d, low nibbles first.
func DequantizeQ4_0(src []byte, dst []float32) {
	nb := blocks("Q4_0", len(src), len(dst), QK4_0, BlockBytesQ4_0)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ4_0 : (i+1)*BlockBytesQ4_0]
		y := dst[i*QK4_0 : (i+1)*QK4_0]
		d := f16At(b)
		qs := b[2:18]
		for j := 0; j < QK4_0/2; j++ {
			y[j] = float32(int(qs[j]&0x0F)-8) * d
			y[j+QK4_0/2] = float32(int(qs[j]>>4)-8) * d
		}
	}
}

// DequantizeQ4_1 expands Q4_1 blocks: y = q * d + m.
func DequantizeQ4_1(src []byte, dst []float32) {
	nb := blocks("Q4_1", len(src), len(dst), QK4_1, BlockBytesQ4_1)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ4_1 : (i+1)*BlockBytesQ4_1]
		y := dst[i*QK4_1 : (i+1)*QK4_1]
		d, m := f16At(b), f16At(b[2:])
		qs := b[4:20]
		for j := 0; j < QK4_1/2; j++ {
			y[j] = float32(float32(qs[j]&0x0F)*d) + m
			y[j+QK4_1/2] = float32(float32(qs[j]>>4)*d) + m
		}
	}
}

// DequantizeQ5_0 expands Q5_0 blocks: y = (q - 16) * d, where bit 4 of
// element j comes from bit j of the 32-bit little-endian qh.
func DequantizeQ5_0(src []byte, dst []float32) {
	nb := blocks("Q5_0", len(src), len(dst), QK5_0, BlockBytesQ5_0)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ5_0 : (i+1)*BlockBytesQ5_0]
		y := dst[i*QK5_0 : (i+1)*QK5_0]
		d := f16At(b)
		qh := binary.LittleEndian.Uint32(b[2:])
		qs := b[6:22]
		for j := 0; j < QK5_0/2; j++ {
			xh0 := byte((qh>>j)<<4) & 0x10
			xh1 := byte(qh>>(j+12)) & 0x10
			y[j] = float32(int(qs[j]&0x0F|xh0)-16) * d
			y[j+QK5_0/2] = float32(int(qs[j]>>4|xh1)-16) * d
		}
	}
}

// DequantizeQ5_1 expands Q5_1 blocks: y = q * d + m (q has 5 bits as in Q5_0).
func DequantizeQ5_1(src []byte, dst []float32) {
	nb := blocks("Q5_1", len(src), len(dst), QK5_1, BlockBytesQ5_1)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ5_1 : (i+1)*BlockBytesQ5_1]
		y := dst[i*QK5_1 : (i+1)*QK5_1]
		d, m := f16At(b), f16At(b[2:])
		qh := binary.LittleEndian.Uint32(b[4:])
		qs := b[8:24]
		for j := 0; j < QK5_1/2; j++ {
			xh0 := byte((qh>>j)<<4) & 0x10
			xh1 := byte(qh>>(j+12)) & 0x10
			y[j] = float32(float32(qs[j]&0x0F|xh0)*d) + m
			y[j+QK5_1/2] = float32(float32(qs[j]>>4|xh1)*d) + m
		}
	}
}

// DequantizeQ8_0 expands Q8_0 blocks: y = q * d.
func DequantizeQ8_0(src []byte, dst []float32) {
	nb := blocks("Q8_0", len(src), len(dst), QK8_0, BlockBytesQ8_0)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ8_0 : (i+1)*BlockBytesQ8_0]
		y := dst[i*QK8_0 : (i+1)*QK8_0]
		d := f16At(b)
		qs := b[2:34]
		for j := range y {
			y[j] = float32(int8(qs[j])) * d
		}
	}
}

// DequantizeQ8_1 expands Q8_1 blocks: y = q * d (s, the block's d*sum(q), is
// not needed). ggml has no to_float for Q8_1 (it only exists as the
// activation side of Q4_1/Q5_1 dot products); this is the obvious one.
func DequantizeQ8_1(src []byte, dst []float32) {
	nb := blocks("Q8_1", len(src), len(dst), QK8_1, BlockBytesQ8_1)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ8_1 : (i+1)*BlockBytesQ8_1]
		y := dst[i*QK8_1 : (i+1)*QK8_1]
		d := f16At(b)
		qs := b[4:36]
		for j := range y {
			y[j] = float32(int8(qs[j])) * d
		}
	}
}
