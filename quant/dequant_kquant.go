package quant

import "encoding/binary"

// Dequantizers of the 256-element super-block formats (K-quants), bit-exact
// with ggml's dequantize_row_*_K. Each takes whole super-blocks: len(dst) a
// multiple of QK_K and len(src) exactly len(dst)/QK_K blocks, else it panics.
// Output order and bit positions are drawn in doc.go.

// DequantizeQ2_K expands Q2_K blocks: y = d*sc*q - dmin*m per 16 elements,
// q 2 bits, (sc, m) the low/high nibble of scales[j].
func DequantizeQ2_K(src []byte, dst []float32) {
	nb := blocks("Q2_K", len(src), len(dst), QK_K, BlockBytesQ2_K)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ2_K : (i+1)*BlockBytesQ2_K]
		y := dst[i*QK_K : (i+1)*QK_K]
		d := f16At(b[OffQ2_KD:])
		min := f16At(b[OffQ2_KDmin:])
		scales := b[OffQ2_KScales : OffQ2_KScales+16]
		q := b[OffQ2_KQs : OffQ2_KQs+64]
		is, o := 0, 0
		for n := 0; n < QK_K; n += 128 {
			shift := uint(0)
			for j := 0; j < 4; j++ {
				for half := 0; half < 2; half++ {
					sc := scales[is]
					is++
					dl := d * float32(sc&0xF)
					ml := float32(min * float32(sc>>4)) // rounded: keeps Go from fusing into an FMA
					qq := q[16*half : 16*half+16]
					for l := 0; l < 16; l++ {
						y[o+l] = float32(dl*float32((qq[l]>>shift)&3)) - ml
					}
					o += 16
				}
				shift += 2
			}
			q = q[32:]
		}
	}
}

// DequantizeQ3_K expands Q3_K blocks: y = d*(sc-32)*(q - 4*(1-hbit)) per 16
// elements, q 2 low bits from qs and the high bit from hmask.
func DequantizeQ3_K(src []byte, dst []float32) {
	nb := blocks("Q3_K", len(src), len(dst), QK_K, BlockBytesQ3_K)
	var sc [16]int8
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ3_K : (i+1)*BlockBytesQ3_K]
		y := dst[i*QK_K : (i+1)*QK_K]
		dAll := f16At(b[OffQ3_KD:])
		UnpackQ3KScales(b[OffQ3_KScales:OffQ3_KScales+12], &sc)
		hm := b[OffQ3_KHmask : OffQ3_KHmask+32]
		q := b[OffQ3_KQs : OffQ3_KQs+64]
		m := byte(1)
		is, o := 0, 0
		for n := 0; n < QK_K; n += 128 {
			shift := uint(0)
			for j := 0; j < 4; j++ {
				for half := 0; half < 2; half++ {
					dl := dAll * float32(sc[is])
					is++
					for l := 16 * half; l < 16*half+16; l++ {
						v := int((q[l] >> shift) & 3)
						if hm[l]&m == 0 {
							v -= 4
						}
						y[o] = dl * float32(v)
						o++
					}
				}
				shift += 2
				m <<= 1
			}
			q = q[32:]
		}
	}
}

// DequantizeQ4_K expands Q4_K blocks: y = d*sc*q - dmin*m per 32 elements,
// q 4 bits, (sc, m) 6 bits each from ScaleMinK4.
func DequantizeQ4_K(src []byte, dst []float32) {
	nb := blocks("Q4_K", len(src), len(dst), QK_K, BlockBytesQ4_K)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ4_K : (i+1)*BlockBytesQ4_K]
		y := dst[i*QK_K : (i+1)*QK_K]
		d := f16At(b[OffQ4_KD:])
		min := f16At(b[OffQ4_KDmin:])
		scales := b[OffQ4_KScales : OffQ4_KScales+KScaleSize]
		q := b[OffQ4_KQs : OffQ4_KQs+128]
		is := 0
		for j := 0; j < QK_K; j += 64 {
			sc, m := ScaleMinK4(is, scales)
			d1, m1 := d*float32(sc), float32(min*float32(m))
			sc, m = ScaleMinK4(is+1, scales)
			d2, m2 := d*float32(sc), float32(min*float32(m))
			qq := q[:32]
			for l := 0; l < 32; l++ {
				y[j+l] = float32(d1*float32(qq[l]&0xF)) - m1
			}
			for l := 0; l < 32; l++ {
				y[j+32+l] = float32(d2*float32(qq[l]>>4)) - m2
			}
			q = q[32:]
			is += 2
		}
	}
}

// DequantizeQ5_K expands Q5_K blocks: as Q4_K with a fifth bit from qh.
func DequantizeQ5_K(src []byte, dst []float32) {
	nb := blocks("Q5_K", len(src), len(dst), QK_K, BlockBytesQ5_K)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ5_K : (i+1)*BlockBytesQ5_K]
		y := dst[i*QK_K : (i+1)*QK_K]
		d := f16At(b[OffQ5_KD:])
		min := f16At(b[OffQ5_KDmin:])
		scales := b[OffQ5_KScales : OffQ5_KScales+KScaleSize]
		qh := b[OffQ5_KQh : OffQ5_KQh+32]
		ql := b[OffQ5_KQs : OffQ5_KQs+128]
		is := 0
		u1, u2 := byte(1), byte(2)
		for j := 0; j < QK_K; j += 64 {
			sc, m := ScaleMinK4(is, scales)
			d1, m1 := d*float32(sc), float32(min*float32(m))
			sc, m = ScaleMinK4(is+1, scales)
			d2, m2 := d*float32(sc), float32(min*float32(m))
			for l := 0; l < 32; l++ {
				v := ql[l] & 0xF
				if qh[l]&u1 != 0 {
					v += 16
				}
				y[j+l] = float32(d1*float32(v)) - m1
			}
			for l := 0; l < 32; l++ {
				v := ql[l] >> 4
				if qh[l]&u2 != 0 {
					v += 16
				}
				y[j+32+l] = float32(d2*float32(v)) - m2
			}
			ql = ql[32:]
			is += 2
			u1 <<= 2
			u2 <<= 2
		}
	}
}

// DequantizeQ6_K expands Q6_K blocks: y = d*sc*(q-32) per 16 elements, q 6
// bits (4 from ql, 2 from qh), sc a signed byte.
func DequantizeQ6_K(src []byte, dst []float32) {
	nb := blocks("Q6_K", len(src), len(dst), QK_K, BlockBytesQ6_K)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ6_K : (i+1)*BlockBytesQ6_K]
		y := dst[i*QK_K : (i+1)*QK_K]
		d := f16At(b[OffQ6_KD:])
		ql := b[OffQ6_KQl : OffQ6_KQl+128]
		qh := b[OffQ6_KQh : OffQ6_KQh+64]
		sc := b[OffQ6_KScales : OffQ6_KScales+16]
		for n := 0; n < QK_K; n += 128 {
			yy := y[n : n+128]
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int(ql[l]&0xF|((qh[l]>>0)&3)<<4) - 32
				q2 := int(ql[l+32]&0xF|((qh[l]>>2)&3)<<4) - 32
				q3 := int(ql[l]>>4|((qh[l]>>4)&3)<<4) - 32
				q4 := int(ql[l+32]>>4|((qh[l]>>6)&3)<<4) - 32
				yy[l] = d * float32(int8(sc[is])) * float32(q1)
				yy[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
				yy[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
				yy[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
			}
			ql = ql[64:]
			qh = qh[32:]
			sc = sc[8:]
		}
	}
}

// DequantizeQ8_K expands Q8_K blocks: y = d * q, d a float32 (bsums unused).
func DequantizeQ8_K(src []byte, dst []float32) {
	nb := blocks("Q8_K", len(src), len(dst), QK_K, BlockBytesQ8_K)
	for i := 0; i < nb; i++ {
		b := src[i*BlockBytesQ8_K : (i+1)*BlockBytesQ8_K]
		y := dst[i*QK_K : (i+1)*QK_K]
		d := f32At(b[OffQ8_KD:])
		qs := b[OffQ8_KQs : OffQ8_KQs+QK_K]
		for j := range y {
			y[j] = d * float32(int8(qs[j]))
		}
	}
}

// dequantizeF32 copies little-endian float32s.
func dequantizeF32(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = f32At(src[4*i:])
	}
}

// dequantizeF16 expands little-endian halves.
func dequantizeF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = f16Table[binary.LittleEndian.Uint16(src[2*i:])]
	}
}

// dequantizeBF16 expands little-endian bfloat16s.
func dequantizeBF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}
