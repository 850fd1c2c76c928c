package quant

import "encoding/binary"

// Reference quantizers of the K-quants, bit-exact with ggml's
// quantize_row_*_K_ref, which is what quantize_q*_K (and so llama-quantize)
// runs when no importance matrix is given. Each takes whole super-blocks:
// len(src) a multiple of QK_K and len(dst) exactly len(src)/QK_K blocks, else
// it panics. The block-local scratch lives on the stack (fixed-size arrays).

// packQ2Bits packs 256 2-bit levels as Q2_K/Q3_K store them: byte l of each
// 32-byte group g (g = 0, 1) holds elements 128g+l, +32, +64, +96 in bit
// pairs 0-1, 2-3, 4-5, 6-7.
func packQ2Bits(L *[QK_K]uint8, qs []byte) {
	for j := 0; j < QK_K; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// QuantizeQ2_K packs Q2_K blocks (quantize_row_q2_K_ref).
func QuantizeQ2_K(src []float32, dst []byte) {
	nb := blocks("Q2_K", len(dst), len(src), QK_K, BlockBytesQ2_K)
	var (
		L       [QK_K]uint8
		Laux    [16]uint8
		weights [16]float32
		mins    [QK_K / 16]float32
		scales  [QK_K / 16]float32
	)
	const q4scale = 15
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := dst[i*BlockBytesQ2_K : (i+1)*BlockBytesQ2_K]
		ysc := y[OffQ2_KScales : OffQ2_KScales+16]
		var maxScale, maxMin float32
		for j := 0; j < QK_K/16; j++ {
			xs := x[16*j : 16*j+16]
			for l := range weights {
				weights[l] = fabsf(xs[l])
			}
			scales[j], mins[j] = makeQKX2Quants(16, 3, xs, weights[:], L[16*j:], Laux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range scales {
				ysc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putF16Ref(y[OffQ2_KD:], maxScale/q4scale)
		} else {
			for j := range scales {
				ysc[j] = 0
			}
			putF16Ref(y[OffQ2_KD:], 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range mins {
				ysc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putF16Ref(y[OffQ2_KDmin:], maxMin/q4scale)
		} else {
			putF16Ref(y[OffQ2_KDmin:], 0)
		}
		yd, ydmin := f16At(y[OffQ2_KD:]), f16At(y[OffQ2_KDmin:])
		for j := 0; j < QK_K/16; j++ {
			d := yd * float32(ysc[j]&0xF)
			if d == 0 {
				continue
			}
			dm := float32(ydmin * float32(ysc[j]>>4)) // rounded before the add below
			for ii := 0; ii < 16; ii++ {
				l := nearestInt((x[16*j+ii] + dm) / d)
				L[16*j+ii] = uint8(clampInt(l, 0, 3))
			}
		}
		packQ2Bits(&L, y[OffQ2_KQs:OffQ2_KQs+64])
	}
}

// QuantizeQ3_K packs Q3_K blocks (quantize_row_q3_K_ref).
func QuantizeQ3_K(src []float32, dst []byte) {
	nb := blocks("Q3_K", len(dst), len(src), QK_K, BlockBytesQ3_K)
	var (
		L      [QK_K]int8
		L2     [QK_K]uint8
		scales [QK_K / 16]float32
	)
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := dst[i*BlockBytesQ3_K : (i+1)*BlockBytesQ3_K]
		ysc := y[OffQ3_KScales : OffQ3_KScales+12]
		var maxScale, amax float32
		for j := 0; j < QK_K/16; j++ {
			scales[j] = makeQ3Quants(16, 4, x[16*j:], L[16*j:], true)
			if s := fabsf(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		for j := range ysc {
			ysc[j] = 0
		}
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < QK_K/16; j++ {
				l := int8(nearestInt(iscale * scales[j]))
				l = int8(clampInt(int(l), -32, 31) + 32)
				if j < 8 {
					ysc[j] = uint8(l & 0xF)
				} else {
					ysc[j-8] |= uint8(l&0xF) << 4
				}
				l >>= 4
				ysc[j%4+8] |= uint8(l) << (2 * (j / 4))
			}
			putF16Ref(y[OffQ3_KD:], 1/iscale)
		} else {
			putF16Ref(y[OffQ3_KD:], 0)
		}
		yd := f16At(y[OffQ3_KD:])
		var sc [16]int8
		UnpackQ3KScales(ysc, &sc)
		for j := 0; j < QK_K/16; j++ {
			d := yd * float32(sc[j])
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(x[16*j+ii] / d)
				L[16*j+ii] = int8(clampInt(l, -4, 3) + 4)
			}
		}
		hmask := y[OffQ3_KHmask : OffQ3_KHmask+32]
		for j := range hmask {
			hmask[j] = 0
		}
		m, hm := 0, uint8(1)
		for j := 0; j < QK_K; j++ {
			if L[j] > 3 {
				hmask[m] |= hm
				L[j] -= 4
			}
			if m++; m == QK_K/8 {
				m, hm = 0, hm<<1
			}
		}
		for j := range L {
			L2[j] = uint8(L[j])
		}
		packQ2Bits(&L2, y[OffQ3_KQs:OffQ3_KQs+64])
	}
}

// packScalesK4 stores the 6-bit scale ls and min lm of sub-block j into the
// 12-byte Q4_K/Q5_K scales field; j must run 0..7 in order (j < 4 assigns the
// bytes that j >= 4 ORs its high bits into).
func packScalesK4(j int, ls, lm uint8, s []byte) {
	if j < 4 {
		s[j] = ls
		s[j+4] = lm
		return
	}
	s[j+4] = ls&0xF | (lm&0xF)<<4
	s[j-4] |= (ls >> 4) << 6
	s[j] |= (lm >> 4) << 6
}

// kScalesMins fits scale and min of the 8 sub-blocks of 32 (Q4_K/Q5_K ref),
// quantizes them to 6 bits against super-block d and dmin, writes d, dmin
// and the packed scales into y, and requantizes x into L with levels
// [0, nmax] under the stored (rounded) scales.
func kScalesMins(x []float32, y []byte, L *[QK_K]uint8, nmax int, rmin, rdelta float32, nstep int) {
	var (
		Laux    [32]uint8
		weights [32]float32
		mins    [QK_K / 32]float32
		scales  [QK_K / 32]float32
	)
	var maxScale, maxMin float32
	for j := 0; j < QK_K/32; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for l := range xs {
			sumX2 += float32(xs[l] * xs[l])
		}
		avX := sqrtf(sumX2 / 32)
		for l := range xs {
			weights[l] = avX + fabsf(xs[l])
		}
		scales[j], mins[j] = makeQKX2Quants(32, nmax, xs, weights[:], L[32*j:], Laux[:], rmin, rdelta, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	ysc := y[OffQ4_KScales : OffQ4_KScales+KScaleSize]
	for j := 0; j < QK_K/32; j++ {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		packScalesK4(j, ls, lm, ysc)
	}
	putF16Ref(y[OffQ4_KD:], maxScale/63)
	putF16Ref(y[OffQ4_KDmin:], maxMin/63)
	yd, ydmin := f16At(y[OffQ4_KD:]), f16At(y[OffQ4_KDmin:])
	for j := 0; j < QK_K/32; j++ {
		sc, m := ScaleMinK4(j, ysc)
		d := yd * float32(sc)
		if d == 0 {
			continue
		}
		dm := float32(ydmin * float32(m)) // rounded before the add below
		for ii := 0; ii < 32; ii++ {
			l := nearestInt((x[32*j+ii] + dm) / d)
			L[32*j+ii] = uint8(clampInt(l, 0, nmax))
		}
	}
}

// QuantizeQ4_K packs Q4_K blocks (quantize_row_q4_K_ref).
func QuantizeQ4_K(src []float32, dst []byte) {
	nb := blocks("Q4_K", len(dst), len(src), QK_K, BlockBytesQ4_K)
	var L [QK_K]uint8
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := dst[i*BlockBytesQ4_K : (i+1)*BlockBytesQ4_K]
		kScalesMins(x, y, &L, 15, -1, 0.1, 20)
		q := y[OffQ4_KQs : OffQ4_KQs+128]
		for j := 0; j < QK_K; j += 64 {
			for l := 0; l < 32; l++ {
				q[l] = L[j+l] | L[j+l+32]<<4
			}
			q = q[32:]
		}
	}
}

// QuantizeQ5_K packs Q5_K blocks (quantize_row_q5_K_ref).
func QuantizeQ5_K(src []float32, dst []byte) {
	nb := blocks("Q5_K", len(dst), len(src), QK_K, BlockBytesQ5_K)
	var L [QK_K]uint8
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := dst[i*BlockBytesQ5_K : (i+1)*BlockBytesQ5_K]
		kScalesMins(x, y, &L, 31, -0.5, 0.1, 15)
		qh := y[OffQ5_KQh : OffQ5_KQh+32]
		ql := y[OffQ5_KQs : OffQ5_KQs+128]
		for j := range qh {
			qh[j] = 0
		}
		m1, m2 := uint8(1), uint8(2)
		for n := 0; n < QK_K; n += 64 {
			for j := 0; j < 32; j++ {
				l1 := L[n+j]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				l2 := L[n+j+32]
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				ql[j] = l1 | l2<<4
			}
			m1 <<= 2
			m2 <<= 2
			ql = ql[32:]
		}
	}
}

// QuantizeQ6_K packs Q6_K blocks (quantize_row_q6_K_ref).
func QuantizeQ6_K(src []float32, dst []byte) {
	nb := blocks("Q6_K", len(dst), len(src), QK_K, BlockBytesQ6_K)
	var (
		L      [QK_K]int8
		scales [QK_K / 16]float32
	)
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := dst[i*BlockBytesQ6_K : (i+1)*BlockBytesQ6_K]
		var maxScale, maxAbsScale float32
		for ib := 0; ib < QK_K/16; ib++ {
			scale := makeQxQuants(16, 32, x[16*ib:], L[16*ib:], 1, nil)
			scales[ib] = scale
			if a := fabsf(scale); a > maxAbsScale {
				maxAbsScale, maxScale = a, scale
			}
		}
		if maxAbsScale < groupMaxEps {
			for j := range y {
				y[j] = 0
			}
			continue
		}
		iscale := -128 / maxScale
		putF16Ref(y[OffQ6_KD:], 1/iscale)
		ysc := y[OffQ6_KScales : OffQ6_KScales+16]
		for ib := range scales {
			ysc[ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
		}
		yd := f16At(y[OffQ6_KD:])
		for j := 0; j < QK_K/16; j++ {
			d := yd * float32(int8(ysc[j]))
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(x[16*j+ii] / d)
				L[16*j+ii] = int8(clampInt(l, -32, 31) + 32)
			}
		}
		ql := y[OffQ6_KQl : OffQ6_KQl+128]
		qh := y[OffQ6_KQh : OffQ6_KQh+64]
		for j := 0; j < QK_K; j += 128 {
			for l := 0; l < 32; l++ {
				q1 := uint8(L[j+l]) & 0xF
				q2 := uint8(L[j+l+32]) & 0xF
				q3 := uint8(L[j+l+64]) & 0xF
				q4 := uint8(L[j+l+96]) & 0xF
				ql[l] = q1 | q3<<4
				ql[l+32] = q2 | q4<<4
				qh[l] = uint8(L[j+l])>>4 | (uint8(L[j+l+32])>>4)<<2 | (uint8(L[j+l+64])>>4)<<4 | (uint8(L[j+l+96])>>4)<<6
			}
			ql = ql[64:]
			qh = qh[32:]
		}
	}
}

// QuantizeQ8_K packs Q8_K blocks (quantize_row_q8_K_ref, which is also what
// llama.cpp's x86 CPU backend uses for activations): iscale = -127/max with
// max the element of largest magnitude (first on ties), q = min(127,
// nearest(iscale*x)), d = 1/iscale as float32, bsums[j] = sum of q[16j:16j+16].
// An all-zero block stores d = 0, q = 0, bsums = 0 (ggml leaves bsums as they
// were; they are zero sums anyway).
func QuantizeQ8_K(src []float32, dst []byte) {
	nb := blocks("Q8_K", len(dst), len(src), QK_K, BlockBytesQ8_K)
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := dst[i*BlockBytesQ8_K : (i+1)*BlockBytesQ8_K]
		max, amax := absMax(x)
		if amax == 0 {
			for j := range y {
				y[j] = 0
			}
			continue
		}
		iscale := -127 / max
		qs := y[OffQ8_KQs : OffQ8_KQs+QK_K]
		for j := range x {
			qs[j] = byte(int8(min(127, nearestInt(iscale*x[j]))))
		}
		for j := 0; j < QK_K/16; j++ {
			sum := 0
			for _, q := range qs[16*j : 16*j+16] {
				sum += int(int8(q))
			}
			binary.LittleEndian.PutUint16(y[OffQ8_KBsums+2*j:], uint16(int16(sum)))
		}
		putF32(y[OffQ8_KD:], 1/iscale)
	}
}
