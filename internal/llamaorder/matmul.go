package llamaorder

import (
	"encoding/binary"
	"math"

	"kiln/gguf"
	"kiln/kernels"
	"kiln/quant"
)

// fma32 is an exactly rounded float32 fused multiply-add (VFMADD): the
// product and sum in float64, corrected where float64 rounding could
// double-round.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	u := math.Float64bits(s)
	if u&(1<<29-1) != 1<<28 {
		return float32(s)
	}
	bv := s - p
	e := (p - (s - bv)) + (float64(c) - bv)
	if e != 0 && u&1 == 0 {
		if (e > 0) == (s > 0) {
			u++
		} else {
			u--
		}
	}
	return float32(math.Float64frombits(u))
}

func hsum(l *[8]float32) float32 {
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

// MatMul: dst [T][Rows] = x [T][Cols] · Wᵀ in llama.cpp's batched order.
func MatMul(dst []float32, W *kernels.Matrix, x []float32, T int) {
	cols := W.Cols
	switch W.Type {
	case gguf.TypeQ8_0:
		nb := cols / 32
		xq := make([]byte, nb*34)
		for t := 0; t < T; t++ {
			quant.QuantizeActQ8_0(x[t*cols:(t+1)*cols], xq)
			for r := 0; r < W.Rows; r++ {
				wr := W.Data[r*nb*34:]
				var l [8]float32
				for b := 0; b < nb; b++ {
					wb, xb := wr[b*34:], xq[b*34:]
					s := quant.F16ToF32(binary.LittleEndian.Uint16(wb)) * quant.F16ToF32(binary.LittleEndian.Uint16(xb))
					for j := 0; j < 8; j++ {
						var is int32
						for k := 0; k < 4; k++ {
							is += int32(int8(wb[2+4*j+k])) * int32(int8(xb[2+4*j+k]))
						}
						l[j] = fma32(s, float32(is), l[j])
					}
				}
				dst[t*W.Rows+r] = hsum(&l)
			}
		}
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16:
		w := make([]float32, W.Rows*cols)
		for r := 0; r < W.Rows; r++ {
			W.Row(r, w[r*cols:(r+1)*cols])
		}
		xc := make([]float32, cols)
		for t := 0; t < T; t++ {
			for i, v := range x[t*cols : (t+1)*cols] {
				switch W.Type {
				case gguf.TypeF16:
					v = quant.F16ToF32(quant.F32ToF16(v))
				case gguf.TypeBF16:
					v = quant.BF16ToF32(quant.F32ToBF16(v))
				}
				xc[i] = v
			}
			for r := 0; r < W.Rows; r++ {
				wr := w[r*cols : (r+1)*cols]
				if W.Rows%4 != 0 { // llamafile declines: ggml_vec_dot_*
					dst[t*W.Rows+r] = vecdot(W.Type, wr, xc)
					continue
				}
				var l [8]float32
				for k := 0; k < cols; k += 8 {
					for j := 0; j < 8; j++ {
						l[j] = fma32(wr[k+j], xc[k+j], l[j])
					}
				}
				dst[t*W.Rows+r] = hsum(&l)
			}
		}
	case gguf.TypeQ4_0:
		nb := cols / 32
		xq := make([]byte, nb*34)
		for t := 0; t < T; t++ {
			quant.QuantizeActQ8_0(x[t*cols:(t+1)*cols], xq)
			for r := 0; r < W.Rows; r++ {
				wr := W.Data[r*nb*18:]
				if W.Rows%8 != 0 { // not repacked: tinyBLAS_Q0_AVX lanes
					var l [8]float32
					for b := 0; b < nb; b++ {
						wb, xb := wr[b*18:], xq[b*34:]
						s := quant.F16ToF32(binary.LittleEndian.Uint16(wb)) * quant.F16ToF32(binary.LittleEndian.Uint16(xb))
						for j := 0; j < 8; j++ {
							var is int32
							for k := 0; k < 4; k++ {
								e := 4*j + k
								var q int32
								if e < 16 {
									q = int32(wb[2+e]&15) - 8
								} else {
									q = int32(wb[2+e-16]>>4) - 8
								}
								is += q * int32(int8(xb[2+e]))
							}
							l[j] = fma32(s, float32(is), l[j])
						}
					}
					dst[t*W.Rows+r] = hsum(&l)
					continue
				}
				var acc float32
				for b := 0; b < nb; b++ {
					wb, xb := wr[b*18:], xq[b*34:]
					var is int32
					for e := 0; e < 32; e++ {
						var q int32
						if e < 16 {
							q = int32(wb[2+e]&15) - 8
						} else {
							q = int32(wb[2+e-16]>>4) - 8
						}
						is += q * int32(int8(xb[2+e]))
					}
					s := quant.F16ToF32(binary.LittleEndian.Uint16(wb)) * quant.F16ToF32(binary.LittleEndian.Uint16(xb))
					acc = fma32(float32(is), s, acc)
				}
				dst[t*W.Rows+r] = acc
			}
		}
	case gguf.TypeQ5_0: // tinyBLAS_Q0_AVX lanes, every shape (no repacked form)
		nb := cols / 32
		xq := make([]byte, nb*34)
		for t := 0; t < T; t++ {
			quant.QuantizeActQ8_0(x[t*cols:(t+1)*cols], xq)
			for r := 0; r < W.Rows; r++ {
				wr := W.Data[r*nb*22:]
				var l [8]float32
				for b := 0; b < nb; b++ {
					wb, xb := wr[b*22:], xq[b*34:]
					qh := binary.LittleEndian.Uint32(wb[2:])
					s := quant.F16ToF32(binary.LittleEndian.Uint16(wb)) * quant.F16ToF32(binary.LittleEndian.Uint16(xb))
					for j := 0; j < 8; j++ {
						var is int32
						for k := 0; k < 4; k++ {
							e := 4*j + k
							var q int32
							if e < 16 {
								q = int32(wb[6+e] & 15)
							} else {
								q = int32(wb[6+e-16] >> 4)
							}
							q |= int32(qh>>e&1) << 4
							is += (q - 16) * int32(int8(xb[2+e]))
						}
						l[j] = fma32(s, float32(is), l[j])
					}
				}
				dst[t*W.Rows+r] = hsum(&l)
			}
		}
	case gguf.TypeQ4_K:
		nb := cols / 256
		xq := make([]byte, nb*292)
		for t := 0; t < T; t++ {
			quant.QuantizeActQ8_K(x[t*cols:(t+1)*cols], xq)
			for r := 0; r < W.Rows; r++ {
				if W.Rows%8 != 0 {
					dst[t*W.Rows+r] = q4kVec(W.Data[r*nb*144:(r+1)*nb*144], xq, nb)
					continue
				}
				dst[t*W.Rows+r] = q4kRepack(W.Data[r*nb*144:(r+1)*nb*144], xq, nb)
			}
		}
	case gguf.TypeQ6_K:
		nb := cols / 256
		xq := make([]byte, nb*292)
		for t := 0; t < T; t++ {
			quant.QuantizeActQ8_K(x[t*cols:(t+1)*cols], xq)
			for r := 0; r < W.Rows; r++ {
				dst[t*W.Rows+r] = q6k(W.Data[r*nb*210:(r+1)*nb*210], xq, nb)
			}
		}
	case gguf.TypeQ4_1, gguf.TypeQ5_1:
		nb := cols / 32
		xq := make([]byte, nb*36)
		wb := 20
		if W.Type == gguf.TypeQ5_1 {
			wb = 24
		}
		for t := 0; t < T; t++ {
			quant.QuantizeActQ8_1(x[t*cols:(t+1)*cols], xq)
			for r := 0; r < W.Rows; r++ {
				dst[t*W.Rows+r] = legacy1(W.Type, W.Data[r*nb*wb:(r+1)*nb*wb], xq, nb)
			}
		}
	case gguf.TypeQ5_K:
		nb := cols / 256
		xq := make([]byte, nb*292)
		for t := 0; t < T; t++ {
			quant.QuantizeActQ8_K(x[t*cols:(t+1)*cols], xq)
			for r := 0; r < W.Rows; r++ {
				dst[t*W.Rows+r] = q5k(W.Data[r*nb*176:(r+1)*nb*176], xq, nb)
			}
		}
	case gguf.TypeQ2_K, gguf.TypeQ3_K:
		nb := cols / 256
		wb, dot := 84, q2k
		if W.Type == gguf.TypeQ3_K {
			wb, dot = 110, q3k
		}
		xq := make([]byte, nb*292)
		for t := 0; t < T; t++ {
			quant.QuantizeActQ8_K(x[t*cols:(t+1)*cols], xq)
			for r := 0; r < W.Rows; r++ {
				dst[t*W.Rows+r] = dot(W.Data[r*nb*wb:(r+1)*nb*wb], xq, nb)
			}
		}
	default:
		panic("llamaorder: no recipe for " + W.Type.String())
	}
}

func vecdot(typ gguf.Type, x, y []float32) float32 {
	n := len(x)
	var acc [4][8]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		for j := 0; j < 4; j++ {
			for l := 0; l < 8; l++ {
				a, b := x[i+8*j+l], y[i+8*j+l]
				if typ != gguf.TypeBF16 {
					acc[j][l] = fma32(a, b, acc[j][l])
				} else {
					acc[j][l] = a*b + acc[j][l]
				}
			}
		}
	}
	if typ != gguf.TypeBF16 {
		for l := 0; l < 8; l++ {
			acc[0][l] += acc[2][l]
			acc[1][l] += acc[3][l]
		}
		for l := 0; l < 8; l++ {
			acc[0][l] += acc[1][l]
		}
		var t0 [4]float32
		for l := 0; l < 4; l++ {
			t0[l] = acc[0][l] + acc[0][l+4]
		}
		s := (t0[0] + t0[1]) + (t0[2] + t0[3])
		if typ == gguf.TypeF16 { // ggml_vec_dot_f16 sums the tail in ggml_float (double)
			sd := float64(s)
			for i := np; i < n; i++ {
				sd += float64(x[i] * y[i])
			}
			return float32(sd)
		}
		for i := np; i < n; i++ {
			s = fma32(x[i], y[i], s)
		}
		return s
	}
	// bf16: c1 = (c1+c3) + (c2+c4); g = hi+lo; (g0+g2)+(g1+g3)
	var c [8]float32
	for l := 0; l < 8; l++ {
		c[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l])
	}
	var g [4]float32
	for l := 0; l < 4; l++ {
		g[l] = c[l+4] + c[l]
	}
	sf := float64((g[0] + g[2]) + (g[1] + g[3]))
	for i := np; i < n; i++ {
		sf += float64(x[i] * y[i])
	}
	return float32(sf)
}

// q6k: ggml_vec_dot_q6_K_q8_K, AVX2.
func q6k(w, x []byte, nb int) float32 {
	var acc [8]float32
	for i := 0; i < nb; i++ {
		wb, xb := w[i*210:], x[i*292:]
		ql, qh, sc := wb[:128], wb[128:192], wb[192:208]
		d := math.Float32frombits(binary.LittleEndian.Uint32(xb)) * quant.F16ToF32(binary.LittleEndian.Uint16(wb[208:]))
		q8 := xb[4:260]
		var lane [8]int32
		for j := 0; j < 2; j++ {
			for b := 0; b < 32; b++ {
				l1, l2, h := ql[j*64+b], ql[j*64+32+b], qh[j*32+b]
				q := [4]int32{int32(l1&15 | (h&3)<<4), int32(l2&15 | (h&12)<<2), int32(l1>>4 | h&48), int32(l2>>4 | (h&192)>>2)}
				for k := 0; k < 4; k++ {
					e := j*128 + k*32 + b
					s := int32(int8(sc[8*j+2*k+b/16]))
					lane[(b/4)%8] += s * q[k] * int32(int8(q8[e]))
				}
			}
		}
		for m := 0; m < 8; m++ {
			bs0 := int32(int16(binary.LittleEndian.Uint16(xb[260+4*m:])))
			bs1 := int32(int16(binary.LittleEndian.Uint16(xb[260+4*m+2:])))
			lane[m] -= 32 * (bs0*int32(int8(sc[2*m])) + bs1*int32(int8(sc[2*m+1])))
			acc[m] = fma32(d, float32(lane[m]), acc[m])
		}
	}
	return hsum(&acc)
}

func scaleMin(j int, q []byte) (int32, int32) {
	if j < 4 {
		return int32(q[j] & 63), int32(q[j+4] & 63)
	}
	return int32(q[j+4]&0xF | (q[j-4]>>6)<<4), int32(q[j+4]>>4 | (q[j]>>6)<<4)
}

// q4kRepack: ggml_gemm_q4_K_8x8_q8_K, AVX2.
func q4kRepack(w, x []byte, nb int) float32 {
	var acc, accMin float32
	for i := 0; i < nb; i++ {
		wb, xb := w[i*144:], x[i*292:]
		d := quant.F16ToF32(binary.LittleEndian.Uint16(wb))
		dmin := quant.F16ToF32(binary.LittleEndian.Uint16(wb[2:]))
		sc, qs := wb[4:16], wb[16:144]
		d8 := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		q8 := xb[4:260]
		for sb := 0; sb < 4; sb++ {
			var isum [2]int32
			for e := 0; e < 32; e++ {
				b := qs[32*sb+e]
				isum[0] += int32(b&15) * int32(int8(q8[64*sb+e]))
				isum[1] += int32(b>>4) * int32(int8(q8[64*sb+32+e]))
			}
			s0, m0 := scaleMin(2*sb, sc)
			s1, m1 := scaleMin(2*sb+1, sc)
			iacc := s0*isum[0] + s1*isum[1]
			bs := func(k int) int32 { return int32(int16(binary.LittleEndian.Uint16(xb[260+2*k:]))) }
			imin := m0*(bs(4*sb)+bs(4*sb+1)) + m1*(bs(4*sb+2)+bs(4*sb+3))
			acc = fma32(float32(iacc), d*d8, acc)
			accMin = fma32(float32(imin), dmin*d8, accMin)
		}
	}
	return acc - accMin
}

// q4kVec: ggml_vec_dot_q4_K_q8_K, AVX2.
func q4kVec(w, x []byte, nb int) float32 {
	var acc [8]float32
	var accM [4]float32
	for i := 0; i < nb; i++ {
		wb, xb := w[i*144:], x[i*292:]
		d8 := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := d8 * quant.F16ToF32(binary.LittleEndian.Uint16(wb))
		dmin := -d8 * quant.F16ToF32(binary.LittleEndian.Uint16(wb[2:]))
		sc, qs := wb[4:16], wb[16:144]
		q8 := xb[4:260]
		bs := func(k int) int32 { return int32(int16(binary.LittleEndian.Uint16(xb[260+2*k:]))) }
		var mins [8]int32
		var scs [8]int32
		for k := 0; k < 8; k++ {
			scs[k], mins[k] = scaleMin(k, sc)
		}
		for k := 0; k < 4; k++ {
			prod := mins[2*k]*(bs(4*k)+bs(4*k+1)) + mins[2*k+1]*(bs(4*k+2)+bs(4*k+3))
			accM[k] = fma32(dmin, float32(prod), accM[k])
		}
		var lane [8]int32
		for j := 0; j < 4; j++ {
			for e := 0; e < 32; e++ {
				b := qs[32*j+e]
				lane[e/4] += scs[2*j]*int32(b&15)*int32(int8(q8[64*j+e])) + scs[2*j+1]*int32(b>>4)*int32(int8(q8[64*j+32+e]))
			}
		}
		for m := 0; m < 8; m++ {
			acc[m] = fma32(d, float32(lane[m]), acc[m])
		}
	}
	return hsum(&acc) + ((accM[0] + accM[2]) + (accM[1] + accM[3]))
}

// legacy1: ggml_vec_dot_q4_1_q8_1 / ggml_vec_dot_q5_1_q8_1, AVX2 (every
// matrix shape: neither type has a tinyBLAS or repacked path on x86). Per
// block, summs = fma(m_w, s_x, summs) (the compiler contracts
// "summs += m*s"), lane j = fma(d_w*d_x, float(I_j), lane j) with I_j the
// exact sum of elements 4j..4j+3; result hsum8(lanes) + summs.
func legacy1(typ gguf.Type, w, x []byte, nb int) float32 {
	var l [8]float32
	var summs float32
	bw := 20
	if typ == gguf.TypeQ5_1 {
		bw = 24
	}
	for b := 0; b < nb; b++ {
		wb, xb := w[b*bw:], x[b*36:]
		h := func(p []byte) float32 { return quant.F16ToF32(binary.LittleEndian.Uint16(p)) }
		summs = fma32(h(wb[2:]), h(xb[2:]), summs)
		s := h(wb) * h(xb)
		var qh uint32
		qs := wb[4:20]
		if typ == gguf.TypeQ5_1 {
			qh, qs = binary.LittleEndian.Uint32(wb[4:]), wb[8:24]
		}
		for j := 0; j < 8; j++ {
			var is int32
			for k := 0; k < 4; k++ {
				e := 4*j + k
				var q int32
				if e < 16 {
					q = int32(qs[e] & 15)
				} else {
					q = int32(qs[e-16] >> 4)
				}
				q |= int32(qh>>e&1) << 4
				is += q * int32(int8(xb[4+e]))
			}
			l[j] = fma32(s, float32(is), l[j])
		}
	}
	return hsum(&l) + summs
}

// q5k: ggml_vec_dot_q5_K_q8_K, AVX2 (Q5_K is not repacked on x86). Per
// super-block d = dx*d_w, dmin = -dx*dmin_w; summs = fma(dmin,
// float(sum_k min_k*(bsums 2k + 2k+1)), summs); lane m = the exact sum
// over the eight 32-element chunks c of scale_c * (q5.q8 over elements
// 32c+4m..32c+4m+3), acc_m = fma(d, float(lane m), acc_m); result
// hsum8(acc) + summs.
func q5k(w, x []byte, nb int) float32 {
	var acc [8]float32
	var summs float32
	for i := 0; i < nb; i++ {
		wb, xb := w[i*176:], x[i*292:]
		d8 := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := d8 * quant.F16ToF32(binary.LittleEndian.Uint16(wb))
		dmin := -d8 * quant.F16ToF32(binary.LittleEndian.Uint16(wb[2:]))
		sc, qh, qs := wb[4:16], wb[16:48], wb[48:176]
		q8 := xb[4:260]
		bs := func(k int) int32 { return int32(int16(binary.LittleEndian.Uint16(xb[260+2*k:]))) }
		var prod int32
		for k := 0; k < 8; k++ {
			_, m := scaleMin(k, sc)
			prod += m * (bs(2*k) + bs(2*k+1))
		}
		summs = fma32(dmin, float32(prod), summs)
		var lane [8]int32
		for j := 0; j < 4; j++ {
			s0, _ := scaleMin(2*j, sc)
			s1, _ := scaleMin(2*j+1, sc)
			for e := 0; e < 32; e++ {
				b := qs[32*j+e]
				lo := int32(b&15) | int32(qh[e]>>(2*j)&1)<<4
				hi := int32(b>>4) | int32(qh[e]>>(2*j+1)&1)<<4
				lane[e/4] += s0*lo*int32(int8(q8[64*j+e])) + s1*hi*int32(int8(q8[64*j+32+e]))
			}
		}
		for m := 0; m < 8; m++ {
			acc[m] = fma32(d, float32(lane[m]), acc[m])
		}
	}
	return hsum(&acc) + summs
}

// q2k: ggml_vec_dot_q2_K_q8_K, AVX2 (Q2_K is not repacked on x86). Per
// super-block d = dx*d_w, dmin = -dx*dmin_w; first acc = fma(dmin,
// float(prod), acc) with prod = _mm256_madd_epi16(mins, bsums) (lane m:
// min 2m * bsums 2m + min 2m+1 * bsums 2m+1), then acc = fma(d,
// float(sumi), acc) where sumi lane m is the exact sum over the 32-element
// chunks of scale * (q2.q8 over elements 4m..4m+3 of the chunk) (the
// maddubs/madd lanes; scale per 16 elements); result hsum8(acc).
func q2k(w, x []byte, nb int) float32 {
	var acc [8]float32
	for i := 0; i < nb; i++ {
		wb, xb := w[i*84:], x[i*292:]
		sc, q2 := wb[:16], wb[16:80]
		y := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := y * quant.F16ToF32(binary.LittleEndian.Uint16(wb[80:]))
		dmin := -y * quant.F16ToF32(binary.LittleEndian.Uint16(wb[82:]))
		q8 := xb[4:260]
		bs := func(k int) int32 { return int32(int16(binary.LittleEndian.Uint16(xb[260+2*k:]))) }
		for m := 0; m < 8; m++ {
			prod := int32(sc[2*m]>>4)*bs(2*m) + int32(sc[2*m+1]>>4)*bs(2*m+1)
			acc[m] = fma32(dmin, float32(prod), acc[m])
		}
		var sumi [8]int32
		for j := 0; j < 2; j++ { // 128 elements: 32 bytes of q2, four shifts
			for k := 0; k < 4; k++ {
				for b := 0; b < 32; b++ {
					e := 128*j + 32*k + b
					q := int32(q2[32*j+b] >> (2 * k) & 3)
					s := int32(sc[8*j+2*k+b/16] & 15)
					sumi[b/4] += s * q * int32(int8(q8[e]))
				}
			}
		}
		for m := 0; m < 8; m++ {
			acc[m] = fma32(d, float32(sumi[m]), acc[m])
		}
	}
	return hsum(&acc)
}

// q3k: ggml_vec_dot_q3_K_q8_K, AVX2 (Q3_K is not repacked on x86). Scales
// from the three uint32 aux words (kmask1 = 0x03030303, kmask2 =
// 0x0f0f0f0f), minus 32; quants (q3 >> 2k & 3) - 4*(hmask bit 4j+k clear);
// per super-block d = dx*d_w, acc = fma(d, float(sumi), acc) with sumi's
// lanes as q2k's; result hsum8(acc).
func q3k(w, x []byte, nb int) float32 {
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	var acc [8]float32
	for i := 0; i < nb; i++ {
		wb, xb := w[i*110:], x[i*292:]
		hm, q3 := wb[:32], wb[32:96]
		a0 := binary.LittleEndian.Uint32(wb[96:])
		a1 := binary.LittleEndian.Uint32(wb[100:])
		a2 := binary.LittleEndian.Uint32(wb[104:])
		var sb [16]byte
		binary.LittleEndian.PutUint32(sb[0:], a0&kmask2|(a2>>0&kmask1)<<4)
		binary.LittleEndian.PutUint32(sb[4:], a1&kmask2|(a2>>2&kmask1)<<4)
		binary.LittleEndian.PutUint32(sb[8:], a0>>4&kmask2|(a2>>4&kmask1)<<4)
		binary.LittleEndian.PutUint32(sb[12:], a1>>4&kmask2|(a2>>6&kmask1)<<4)
		d := math.Float32frombits(binary.LittleEndian.Uint32(xb)) * quant.F16ToF32(binary.LittleEndian.Uint16(wb[108:]))
		q8 := xb[4:260]
		var sumi [8]int32
		for j := 0; j < 2; j++ {
			for k := 0; k < 4; k++ {
				bit := uint(4*j + k)
				for b := 0; b < 32; b++ {
					e := 128*j + 32*k + b
					q := int32(q3[32*j+b] >> (2 * k) & 3)
					if hm[b]>>bit&1 == 0 {
						q -= 4
					}
					s := int32(int8(sb[8*j+2*k+b/16]) - 32)
					sumi[b/4] += s * q * int32(int8(q8[e]))
				}
			}
		}
		for m := 0; m < 8; m++ {
			acc[m] = fma32(d, float32(sumi[m]), acc[m])
		}
	}
	return hsum(&acc)
}
