package quant

import "encoding/binary"

// Reference quantizers of the 32-element formats, bit-exact with ggml's
// quantize_row_*_ref (ggml-quants.c), which llama-quantize uses for these
// types when no importance matrix is given. Each takes whole blocks:
// len(src) a multiple of 32 and len(dst) exactly len(src)/32 blocks, else it
// panics (see blocks). Products that C adds to something are rounded to
// float32 first (float32(a*b) + c) so Go never fuses them into an FMA.

// absMax returns the value of largest magnitude in x (the first one on ties)
// and its magnitude, as the Q4_0/Q5_0/K-quant searches do.
func absMax(x []float32) (max, amax float32) {
	for _, v := range x {
		if a := fabsf(v); amax < a {
			amax, max = a, v
		}
	}
	return max, amax
}

// minMax returns the smallest and largest element, starting from ±FLT_MAX
// as quantize_row_q4_1_ref does.
func minMax(x []float32) (min, max float32) {
	min, max = 3.40282346638528859811704183484516925440e+38, -3.40282346638528859811704183484516925440e+38
	for _, v := range x {
		if v < min {
			min = v
		}
		if v > max {
			max = v
		}
	}
	return min, max
}

// QuantizeQ4_0 packs Q4_0 blocks: d = -max/8 where max is the element of
// largest magnitude, q = min(15, trunc(x/d + 8.5)).
func QuantizeQ4_0(src []float32, dst []byte) {
	nb := blocks("Q4_0", len(dst), len(src), QK4_0, BlockBytesQ4_0)
	for i := 0; i < nb; i++ {
		x := src[i*QK4_0 : (i+1)*QK4_0]
		y := dst[i*BlockBytesQ4_0 : (i+1)*BlockBytesQ4_0]
		max, _ := absMax(x)
		d := max / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16Ref(y, d)
		for j := 0; j < QK4_0/2; j++ {
			x0 := float32(x[j] * id)
			x1 := float32(x[QK4_0/2+j] * id)
			xi0 := uint8(min(15, int(int8(truncI32(x0+8.5)))))
			xi1 := uint8(min(15, int(int8(truncI32(x1+8.5)))))
			y[2+j] = xi0 | xi1<<4
		}
	}
}

// QuantizeQ4_1 packs Q4_1 blocks: d = (max-min)/15, m = min,
// q = min(15, trunc((x-min)/d + 0.5)).
func QuantizeQ4_1(src []float32, dst []byte) {
	nb := blocks("Q4_1", len(dst), len(src), QK4_1, BlockBytesQ4_1)
	for i := 0; i < nb; i++ {
		x := src[i*QK4_1 : (i+1)*QK4_1]
		y := dst[i*BlockBytesQ4_1 : (i+1)*BlockBytesQ4_1]
		mn, mx := minMax(x)
		d := (mx - mn) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16Ref(y, d)
		putF16Ref(y[2:], mn)
		for j := 0; j < QK4_1/2; j++ {
			x0 := float32((x[j] - mn) * id)
			x1 := float32((x[QK4_1/2+j] - mn) * id)
			xi0 := uint8(min(15, int(int8(truncI32(x0+0.5)))))
			xi1 := uint8(min(15, int(int8(truncI32(x1+0.5)))))
			y[4+j] = xi0 | xi1<<4
		}
	}
}

// QuantizeQ5_0 packs Q5_0 blocks: d = -max/16, q = min(31, trunc(x/d + 16.5)),
// low nibbles in qs and bit 4 of element j in bit j of qh.
func QuantizeQ5_0(src []float32, dst []byte) {
	nb := blocks("Q5_0", len(dst), len(src), QK5_0, BlockBytesQ5_0)
	for i := 0; i < nb; i++ {
		x := src[i*QK5_0 : (i+1)*QK5_0]
		y := dst[i*BlockBytesQ5_0 : (i+1)*BlockBytesQ5_0]
		max, _ := absMax(x)
		d := max / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16Ref(y, d)
		var qh uint32
		for j := 0; j < QK5_0/2; j++ {
			x0 := float32(x[j] * id)
			x1 := float32(x[QK5_0/2+j] * id)
			xi0 := uint8(min(31, int(int8(truncI32(x0+16.5)))))
			xi1 := uint8(min(31, int(int8(truncI32(x1+16.5)))))
			y[6+j] = xi0&0x0F | (xi1&0x0F)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + QK5_0/2)
		}
		binary.LittleEndian.PutUint32(y[2:], qh)
	}
}

// QuantizeQ5_1 packs Q5_1 blocks: d = (max-min)/31, m = min,
// q = trunc((x-min)/d + 0.5) (5 bits, split as in Q5_0).
func QuantizeQ5_1(src []float32, dst []byte) {
	nb := blocks("Q5_1", len(dst), len(src), QK5_1, BlockBytesQ5_1)
	for i := 0; i < nb; i++ {
		x := src[i*QK5_1 : (i+1)*QK5_1]
		y := dst[i*BlockBytesQ5_1 : (i+1)*BlockBytesQ5_1]
		mn, mx := minMax(x)
		d := (mx - mn) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16Ref(y, d)
		putF16Ref(y[2:], mn)
		var qh uint32
		for j := 0; j < QK5_1/2; j++ {
			x0 := float32((x[j] - mn) * id)
			x1 := float32((x[QK5_1/2+j] - mn) * id)
			xi0 := uint8(truncI32(x0 + 0.5))
			xi1 := uint8(truncI32(x1 + 0.5))
			y[8+j] = xi0&0x0F | (xi1&0x0F)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + QK5_1/2)
		}
		binary.LittleEndian.PutUint32(y[4:], qh)
	}
}

// maxAbsRef is ggml's running MAX(amax, fabsf(v)) with MAX(a,b) = a > b ? a : b.
func maxAbsRef(x []float32) float32 {
	var amax float32
	for _, v := range x {
		a := fabsf(v)
		if !(amax > a) {
			amax = a
		}
	}
	return amax
}

// QuantizeQ8_0 packs Q8_0 blocks as quantize_row_q8_0_ref (model files):
// d = amax/127, q = roundf(x * (1/d)), ties away from zero. For activations
// llama.cpp's x86 CPU backend uses QuantizeActQ8_0 instead.
func QuantizeQ8_0(src []float32, dst []byte) {
	nb := blocks("Q8_0", len(dst), len(src), QK8_0, BlockBytesQ8_0)
	for i := 0; i < nb; i++ {
		x := src[i*QK8_0 : (i+1)*QK8_0]
		y := dst[i*BlockBytesQ8_0 : (i+1)*BlockBytesQ8_0]
		d := maxAbsRef(x) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16Ref(y, d)
		for j, v := range x {
			y[2+j] = byte(int8(truncI32(roundf(v * id))))
		}
	}
}

// QuantizeQ8_1 packs Q8_1 blocks as quantize_row_q8_1_ref: as Q8_0, plus
// s = half(sum(q) * d) with d the unrounded float32 scale.
func QuantizeQ8_1(src []float32, dst []byte) {
	nb := blocks("Q8_1", len(dst), len(src), QK8_1, BlockBytesQ8_1)
	for i := 0; i < nb; i++ {
		x := src[i*QK8_1 : (i+1)*QK8_1]
		y := dst[i*BlockBytesQ8_1 : (i+1)*BlockBytesQ8_1]
		d := maxAbsRef(x) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16Ref(y, d)
		sum := 0
		for j, v := range x {
			q := int8(truncI32(roundf(v * id)))
			y[4+j] = byte(q)
			sum += int(q)
		}
		putF16Ref(y[2:], float32(sum)*d)
	}
}
