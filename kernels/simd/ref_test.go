package simd

import (
	"encoding/binary"
	"math"
)

// Plain references for the tests: dequantize each row to float64 in the
// style of ggml-quants.c dequantize_row_* (element by element, written
// independently of the kernels' integer-first order) and dot in float64.
// Each returns the value and the sum of absolute values of its terms, the
// scale that tolerances are relative to.

func h64(b []byte, off int) float64 {
	return float64(F16ToF32(binary.LittleEndian.Uint16(b[off:])))
}

// deqQ8_0 returns the values of nb Q8_0 blocks.
func deqQ8_0(nb int, b []byte) []float64 {
	out := make([]float64, 0, nb*qk)
	for i := range nb {
		blk := b[i*bytesQ8_0:]
		d := h64(blk, 0)
		for j := range 32 {
			out = append(out, d*float64(int8(blk[2+j])))
		}
	}
	return out
}

// deqQ8_1 returns the values of nb Q8_1 blocks and their stored s fields.
func deqQ8_1(nb int, b []byte) (v, s []float64) {
	for i := range nb {
		blk := b[i*bytesQ8_1:]
		d := h64(blk, 0)
		s = append(s, h64(blk, 2))
		for j := range 32 {
			v = append(v, d*float64(int8(blk[4+j])))
		}
	}
	return v, s
}

func deqQ8_K(nb int, b []byte) []float64 {
	out := make([]float64, 0, nb*qkK)
	for i := range nb {
		blk := b[i*bytesQ8_K:]
		d := float64(math.Float32frombits(binary.LittleEndian.Uint32(blk)))
		for j := range 256 {
			out = append(out, d*float64(int8(blk[4+j])))
		}
	}
	return out
}

// nib returns element j (0..31) of a 32-element 4-bit block's qs[16].
func nib(qs []byte, j int) int {
	if j < 16 {
		return int(qs[j] & 15)
	}
	return int(qs[j-16] >> 4)
}

func deqQ4_0(nb int, b []byte) []float64 {
	var out []float64
	for i := range nb {
		blk := b[i*bytesQ4_0:]
		d := h64(blk, 0)
		for j := range 32 {
			out = append(out, d*float64(nib(blk[2:18], j)-8))
		}
	}
	return out
}

// deqQ4_1 returns d*nib (without the m offset) and m per block: the m term
// pairs with Q8_1's stored s.
func deqQ4_1(nb int, b []byte) (v, m []float64) {
	for i := range nb {
		blk := b[i*bytesQ4_1:]
		d := h64(blk, 0)
		m = append(m, h64(blk, 2))
		for j := range 32 {
			v = append(v, d*float64(nib(blk[4:20], j)))
		}
	}
	return v, m
}

func q5(qh uint32, qs []byte, j int) int { return nib(qs, j) | int(qh>>j&1)<<4 }

func deqQ5_0(nb int, b []byte) []float64 {
	var out []float64
	for i := range nb {
		blk := b[i*bytesQ5_0:]
		d := h64(blk, 0)
		qh := binary.LittleEndian.Uint32(blk[2:])
		for j := range 32 {
			out = append(out, d*float64(q5(qh, blk[6:22], j)-16))
		}
	}
	return out
}

func deqQ5_1(nb int, b []byte) (v, m []float64) {
	for i := range nb {
		blk := b[i*bytesQ5_1:]
		d := h64(blk, 0)
		m = append(m, h64(blk, 2))
		qh := binary.LittleEndian.Uint32(blk[4:])
		for j := range 32 {
			v = append(v, d*float64(q5(qh, blk[8:24], j)))
		}
	}
	return v, m
}

// getScaleMinK4 is ggml's get_scale_min_k4, written out per index.
func getScaleMinK4(j int, q []byte) (sc, m int) {
	if j < 4 {
		return int(q[j] & 63), int(q[j+4] & 63)
	}
	return int(q[j+4]&0xF) | int(q[j-4]>>6)<<4, int(q[j+4]>>4) | int(q[j]>>6)<<4
}

// deqQ4_K / deqQ5_K return d*scale*q and dmin*min per element separately
// (the min part pairs with Q8_K's bsums in the kernels).
func deqQ4_K(nb int, b []byte) (v, mins []float64) {
	for i := range nb {
		blk := b[i*bytesQ4_K:]
		d, dmin := h64(blk, 0), h64(blk, 2)
		q := blk[16:144]
		for j := 0; j < 256; j += 64 {
			is := j / 32
			sc1, m1 := getScaleMinK4(is, blk[4:16])
			sc2, m2 := getScaleMinK4(is+1, blk[4:16])
			for l := range 32 {
				v = append(v, d*float64(sc1)*float64(q[l]&0xF))
				mins = append(mins, dmin*float64(m1))
			}
			for l := range 32 {
				v = append(v, d*float64(sc2)*float64(q[l]>>4))
				mins = append(mins, dmin*float64(m2))
			}
			q = q[32:]
		}
	}
	return v, mins
}

func deqQ5_K(nb int, b []byte) (v, mins []float64) {
	for i := range nb {
		blk := b[i*bytesQ5_K:]
		d, dmin := h64(blk, 0), h64(blk, 2)
		qh, ql := blk[16:48], blk[48:176]
		u1, u2 := byte(1), byte(2)
		for j := 0; j < 256; j += 64 {
			is := j / 32
			sc1, m1 := getScaleMinK4(is, blk[4:16])
			sc2, m2 := getScaleMinK4(is+1, blk[4:16])
			for l := range 32 {
				hb := 0
				if qh[l]&u1 != 0 {
					hb = 16
				}
				v = append(v, d*float64(sc1)*float64(int(ql[l]&0xF)+hb))
				mins = append(mins, dmin*float64(m1))
			}
			for l := range 32 {
				hb := 0
				if qh[l]&u2 != 0 {
					hb = 16
				}
				v = append(v, d*float64(sc2)*float64(int(ql[l]>>4)+hb))
				mins = append(mins, dmin*float64(m2))
			}
			ql = ql[32:]
			u1 <<= 2
			u2 <<= 2
		}
	}
	return v, mins
}

func deqQ6_K(nb int, b []byte) []float64 {
	out := make([]float64, nb*256)
	for i := range nb {
		blk := b[i*bytesQ6_K:]
		d := h64(blk, 208)
		ql, qh, sc := blk[0:128], blk[128:192], blk[192:208]
		y := out[i*256:]
		for n := 0; n < 256; n += 128 {
			for l := range 32 {
				is := l / 16
				q1 := int(ql[l]&0xF|(qh[l]>>0&3)<<4) - 32
				q2 := int(ql[l+32]&0xF|(qh[l]>>2&3)<<4) - 32
				q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
				y[l] = d * float64(int8(sc[is])) * float64(q1)
				y[l+32] = d * float64(int8(sc[is+2])) * float64(q2)
				y[l+64] = d * float64(int8(sc[is+4])) * float64(q3)
				y[l+96] = d * float64(int8(sc[is+6])) * float64(q4)
			}
			y, ql, qh, sc = y[128:], ql[64:], qh[32:], sc[8:]
		}
	}
	return out
}

// dot64 returns sum a[i]*b[i] and sum |a[i]*b[i]|.
func dot64(a, b []float64) (s, abs float64) {
	for i := range a {
		s += a[i] * b[i]
		abs += math.Abs(a[i] * b[i])
	}
	return s, abs
}

// refQuant is a float64 reference for each quantized dot.
var refQuant = map[string]func(nb int, w, x []byte) (float64, float64){
	"Q8_0": func(nb int, w, x []byte) (float64, float64) { return dot64(deqQ8_0(nb, w), deqQ8_0(nb, x)) },
	"Q4_0": func(nb int, w, x []byte) (float64, float64) { return dot64(deqQ4_0(nb, w), deqQ8_0(nb, x)) },
	"Q5_0": func(nb int, w, x []byte) (float64, float64) { return dot64(deqQ5_0(nb, w), deqQ8_0(nb, x)) },
	"Q4_1": func(nb int, w, x []byte) (float64, float64) {
		v, m := deqQ4_1(nb, w)
		xv, s := deqQ8_1(nb, x)
		d, a := dot64(v, xv)
		md, ma := dot64(m, s)
		return d + md, a + ma
	},
	"Q5_1": func(nb int, w, x []byte) (float64, float64) {
		v, m := deqQ5_1(nb, w)
		xv, s := deqQ8_1(nb, x)
		d, a := dot64(v, xv)
		md, ma := dot64(m, s)
		return d + md, a + ma
	},
	"Q4_K": func(nb int, w, x []byte) (float64, float64) {
		v, m := deqQ4_K(nb, w)
		xv := deqQ8_K(nb, x)
		d, a := dot64(v, xv)
		md, ma := dot64(m, xv)
		return d - md, a + ma
	},
	"Q5_K": func(nb int, w, x []byte) (float64, float64) {
		v, m := deqQ5_K(nb, w)
		xv := deqQ8_K(nb, x)
		d, a := dot64(v, xv)
		md, ma := dot64(m, xv)
		return d - md, a + ma
	},
	"Q6_K": func(nb int, w, x []byte) (float64, float64) { return dot64(deqQ6_K(nb, w), deqQ8_K(nb, x)) },
	"Q2_K": func(nb int, w, x []byte) (float64, float64) { return dot64(deqQ2_K(nb, w), deqQ8_K(nb, x)) },
	"Q3_K": func(nb int, w, x []byte) (float64, float64) { return dot64(deqQ3_K(nb, w), deqQ8_K(nb, x)) },
}

// deqQ2_K: ggml's dequantize_row_q2_K, y = d*(sc&15)*q - dmin*(sc>>4).
func deqQ2_K(nb int, b []byte) []float64 {
	out := make([]float64, 0, nb*qkK)
	for i := range nb {
		blk := b[i*bytesQ2_K:]
		d, dmin := h64(blk, 80), h64(blk, 82)
		sc, q := blk[:16], blk[16:80]
		is := 0
		for n := 0; n < qkK; n += 128 {
			for shift := 0; shift < 8; shift += 2 {
				for half := range 2 {
					s := sc[is]
					is++
					for l := 16 * half; l < 16*half+16; l++ {
						out = append(out, d*float64(s&15)*float64(q[l]>>shift&3)-dmin*float64(s>>4))
					}
				}
			}
			q = q[32:]
		}
	}
	return out
}

// deqQ3_K: ggml's dequantize_row_q3_K (scales through the kmask1/kmask2
// words, written out per byte here).
func deqQ3_K(nb int, b []byte) []float64 {
	out := make([]float64, 0, nb*qkK)
	for i := range nb {
		blk := b[i*bytesQ3_K:]
		d := h64(blk, 108)
		hm, q, a := blk[:32], blk[32:96], blk[96:108]
		var sc [16]int
		for k := range 4 {
			sc[k] = int(a[k]&15 | (a[8+k]&3)<<4)
			sc[4+k] = int(a[4+k]&15 | (a[8+k]>>2&3)<<4)
			sc[8+k] = int(a[k]>>4 | (a[8+k]>>4&3)<<4)
			sc[12+k] = int(a[4+k]>>4 | (a[8+k]>>6&3)<<4)
		}
		m, is := byte(1), 0
		for n := 0; n < qkK; n += 128 {
			for shift := 0; shift < 8; shift += 2 {
				for half := range 2 {
					dl := d * float64(sc[is]-32)
					is++
					for l := 16 * half; l < 16*half+16; l++ {
						v := int(q[l] >> shift & 3)
						if hm[l]&m == 0 {
							v -= 4
						}
						out = append(out, dl*float64(v))
					}
				}
				m <<= 1
			}
			q = q[32:]
		}
	}
	return out
}
