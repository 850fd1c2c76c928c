package quant

import (
	"encoding/binary"
	"math"
)

// Elements per block (ggml-common.h). The K-quants share one super-block
// size, QK_K.
const (
	QK4_0 = 32
	QK4_1 = 32
	QK5_0 = 32
	QK5_1 = 32
	QK8_0 = 32
	QK8_1 = 32
	QK_K  = 256

	// KScaleSize is the size of the packed 6-bit scales/mins of Q4_K and Q5_K.
	KScaleSize = 12
)

// Bytes per block. They equal gguf.Type.BlockBytes for the same type; they
// are constants here so kernels can size arrays and index blocks without a
// table lookup.
const (
	BlockBytesQ4_0 = 2 + QK4_0/2          // 18: d, qs
	BlockBytesQ4_1 = 4 + QK4_1/2          // 20: d, m, qs
	BlockBytesQ5_0 = 2 + 4 + QK5_0/2      // 22: d, qh, qs
	BlockBytesQ5_1 = 4 + 4 + QK5_1/2      // 24: d, m, qh, qs
	BlockBytesQ8_0 = 2 + QK8_0            // 34: d, qs
	BlockBytesQ8_1 = 4 + QK8_1            // 36: d, s, qs
	BlockBytesQ2_K = QK_K/16 + QK_K/4 + 4 // 84: scales, qs, d, dmin
	BlockBytesQ3_K = QK_K/8 + QK_K/4 + 12 + 2
	BlockBytesQ4_K = 4 + KScaleSize + QK_K/2          // 144: d, dmin, scales, qs
	BlockBytesQ5_K = 4 + KScaleSize + QK_K/8 + QK_K/2 // 176: d, dmin, scales, qh, qs
	BlockBytesQ6_K = QK_K/2 + QK_K/4 + QK_K/16 + 2    // 210: ql, qh, scales, d
	BlockBytesQ8_K = 4 + QK_K + QK_K/16*2             // 292: d (f32), qs, bsums
)

// Byte offsets of the fields inside one block (see the diagrams in doc.go).
// Fields not listed start at offset 0 or follow the f16 scale(s) directly:
// Q4_0/Q8_0 qs at 2; Q4_1/Q8_1 qs at 4; Q5_0 qh at 2, qs at 6; Q5_1 qh at 4,
// qs at 8.
const (
	OffQ2_KScales = 0
	OffQ2_KQs     = 16
	OffQ2_KD      = 80
	OffQ2_KDmin   = 82

	OffQ3_KHmask  = 0
	OffQ3_KQs     = 32
	OffQ3_KScales = 96
	OffQ3_KD      = 108

	OffQ4_KD      = 0
	OffQ4_KDmin   = 2
	OffQ4_KScales = 4
	OffQ4_KQs     = 16

	OffQ5_KD      = 0
	OffQ5_KDmin   = 2
	OffQ5_KScales = 4
	OffQ5_KQh     = 16
	OffQ5_KQs     = 48

	OffQ6_KQl     = 0
	OffQ6_KQh     = 128
	OffQ6_KScales = 192
	OffQ6_KD      = 208

	OffQ8_KD     = 0
	OffQ8_KQs    = 4
	OffQ8_KBsums = 260
)

// ScaleMinK4 unpacks the 6-bit scale and min of sub-block j (0..7) from the
// 12 packed scale bytes of a Q4_K or Q5_K block (ggml's get_scale_min_k4).
func ScaleMinK4(j int, scales []byte) (sc, m uint8) {
	if j < 4 {
		return scales[j] & 63, scales[j+4] & 63
	}
	sc = scales[j+4]&0xF | (scales[j-4]>>6)<<4
	m = scales[j+4]>>4 | (scales[j]>>6)<<4
	return sc, m
}

// UnpackQ3KScales unpacks the 16 6-bit scales of a Q3_K block (12 packed
// bytes) into signed scales in [-32, 31] (the stored value minus 32).
func UnpackQ3KScales(scales []byte, out *[16]int8) {
	_ = scales[11]
	for j := 0; j < 16; j++ {
		var lo byte
		if j < 8 {
			lo = scales[j] & 0xF
		} else {
			lo = scales[j-8] >> 4
		}
		hi := (scales[8+j%4] >> (2 * (j / 4))) & 3
		out[j] = int8(lo|hi<<4) - 32
	}
}

// f16At reads the little-endian half at b[0:2] as float32.
func f16At(b []byte) float32 { return f16Table[binary.LittleEndian.Uint16(b)] }

// putF16 writes F32ToF16(f) little-endian to b[0:2] (the F16C conversion,
// used by the activation quantizers).
func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, F32ToF16(f)) }

// putF16Ref writes f as a half the way ggml-base's GGML_FP32_TO_FP16 does
// (used by the reference quantizers): F32ToF16, except that every NaN
// becomes sign|0x7e00.
func putF16Ref(b []byte, f float32) {
	h := F32ToF16(f)
	if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
		h = h&0x8000 | 0x7e00
	}
	binary.LittleEndian.PutUint16(b, h)
}

// f32At reads the little-endian float32 at b[0:4].
func f32At(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// putF32 writes f little-endian to b[0:4].
func putF32(b []byte, f float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(f)) }
