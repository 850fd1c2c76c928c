package quant

import (
	"encoding/binary"
	"math"
	"testing"

	"kiln/gguf"
)

// Hand-built blocks with values worked out by hand from ggml's formulas.

func f16bytes(f float32) []byte {
	return binary.LittleEndian.AppendUint16(nil, F32ToF16(f))
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func rep(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func TestKnownBlocks(t *testing.T) {
	qs01 := make([]byte, 16) // qs[j] = low j, high 15-j
	for j := range qs01 {
		qs01[j] = byte(j) | byte(15-j)<<4
	}
	tests := []struct {
		name string
		t    gguf.Type
		blk  []byte
		want map[int]float32 // element -> value (only the listed ones are checked)
	}{
		{"Q4_0", gguf.TypeQ4_0, cat(f16bytes(0.5), qs01),
			// y[j] = (j-8)*0.5, y[16+j] = (15-j-8)*0.5
			map[int]float32{0: -4, 8: 0, 15: 3.5, 16: 3.5, 31: -4}},
		{"Q4_1", gguf.TypeQ4_1, cat(f16bytes(0.25), f16bytes(-1), qs01),
			// y = q*0.25 - 1
			map[int]float32{0: -1, 4: 0, 15: 2.75, 16: 2.75, 31: -1}},
		{"Q5_0", gguf.TypeQ5_0, cat(f16bytes(2), []byte{0x01, 0x00, 0x01, 0x80}, qs01),
			// qh bits 0, 16, 31 set: y[0] = (0|16 - 16)*2 = 0, y[1] = (1-16)*2,
			// y[16] = (15|16 - 16)*2 = 30, y[31] = (0|16-16)*2 = 0, y[30] = (1-16)*2
			map[int]float32{0: 0, 1: -30, 16: 30, 17: -4, 30: -30, 31: 0}},
		{"Q5_1", gguf.TypeQ5_1, cat(f16bytes(1), f16bytes(0.5), []byte{0x00, 0x00, 0x00, 0x80}, qs01),
			// y = q + 0.5; y[31] has qh bit 31: q = 0|16
			map[int]float32{0: 0.5, 15: 15.5, 16: 15.5, 31: 16.5}},
		{"Q8_0", gguf.TypeQ8_0, cat(f16bytes(-0.125), []byte{0x7f, 0x80, 0x01, 0xff}, make([]byte, 28)),
			map[int]float32{0: -15.875, 1: 16, 2: -0.125, 3: 0.125, 31: 0}},
		{"Q8_1", gguf.TypeQ8_1, cat(f16bytes(3), f16bytes(12345), []byte{0x02, 0xfe}, make([]byte, 30)),
			map[int]float32{0: 6, 1: -6, 2: 0}},
		{"Q8_K", gguf.TypeQ8_K, cat(binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.1)), []byte{0x05, 0xfb}, make([]byte, 254), make([]byte, 32)),
			map[int]float32{0: 0.1 * 5, 1: 0.1 * -5, 255: 0}},
		{"Q2_K", gguf.TypeQ2_K,
			// scales[0] = scale 3, min 1; scales[1] = scale 2, min 0; qs[0] = 0b11_10_01_00
			// element 0: q = 3? no: qs[0]>>0&3 = 0 -> y = 0.5*3*0 - 0.25*1
			// element 32 (pair p=1 of byte 0): q = 1, sub-block 2 (scales[2] = 0x21)
			cat([]byte{0x13, 0x02, 0x21}, make([]byte, 13), []byte{0xe4}, make([]byte, 15), []byte{0x03}, make([]byte, 47), f16bytes(0.5), f16bytes(0.25)),
			map[int]float32{0: -0.25, 1: -0.25, 16: 0.5 * 2 * 3, 32: 0.5*1*1 - 0.25*2, 64: 0, 96: 0}},
		{"Q3_K", gguf.TypeQ3_K,
			// all scales stored 32+1 (=1): low nibbles 1, high bits 2 (0b10 in every pair)
			// element 0: qs bits 3, hmask bit set -> q = 3; element 1: qs 0, no hmask -> -4
			cat(append([]byte{0x01}, make([]byte, 31)...), append([]byte{0x03}, make([]byte, 63)...),
				rep(0x11, 8), rep(0xaa, 4), f16bytes(0.5)),
			map[int]float32{0: 0.5 * 1 * 3, 1: 0.5 * 1 * -4, 32: 0.5 * -4}},
		{"Q4_K", gguf.TypeQ4_K,
			// sub-block 0: scale 2, min 1; sub-block 1: scale 3, min 0;
			// sub-block 4: scale 0x12 (low 2 in scales[8], high 1 in scales[0]>>6), min 5
			cat(f16bytes(1), f16bytes(0.5), []byte{0x42, 0x03, 0, 0, 0x01, 0, 0, 0, 0x52, 0, 0, 0}, []byte{0x7f}, make([]byte, 63), []byte{0x09}, make([]byte, 63)),
			// y[0] = 1*2*15 - 0.5*1; y[32] = 1*3*7 - 0; y[128] = 1*18*9 - 0.5*5
			map[int]float32{0: 29.5, 1: -0.5, 32: 21, 128: 159.5, 160: 0}},
		{"Q5_K", gguf.TypeQ5_K,
			// scales as Q4_K sub-block 0/1; qh[0] bit 0 and bit 1 set
			cat(f16bytes(1), f16bytes(0.5), []byte{0x02, 0x03, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0}, []byte{0x03}, make([]byte, 31), []byte{0x7f}, make([]byte, 127)),
			// y[0] = 2*(15+16) - 0.5; y[32] = 3*(7+16); y[1] = -0.5
			map[int]float32{0: 61.5, 32: 69, 1: -0.5, 33: 0}},
		{"Q6_K", gguf.TypeQ6_K,
			// ql[0] = 0x21 (el 0 low 1, el 64 low 2), qh[0] = 0b11_00_10_01
			// el 0: 1|1<<4 = 17 -> 17-32 = -15, scale[0] = 2
			// el 32: ql[32]=0 | 2<<4 = 32 -> 0; el 64: 2 | 0 -> -30, scale[4] = -1
			// el 96: 0 | 3<<4 = 48 -> 16, scale[6] = 3
			cat([]byte{0x21}, make([]byte, 127), []byte{0xc9}, make([]byte, 63),
				[]byte{2, 0, 0, 0, 0xff, 0, 3, 0}, make([]byte, 8), f16bytes(0.25)),
			map[int]float32{0: 0.25 * 2 * -15, 32: 0, 64: 0.25 * -1 * -30, 96: 0.25 * 3 * 16, 1: 0.25 * 2 * -32}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.blk) != tc.t.BlockBytes() {
				t.Fatalf("test block is %d bytes, want %d", len(tc.blk), tc.t.BlockBytes())
			}
			y := make([]float32, tc.t.BlockSize())
			if err := Dequantize(tc.t, tc.blk, y); err != nil {
				t.Fatal(err)
			}
			for e, want := range tc.want {
				if y[e] != want {
					t.Errorf("element %d = %v, want %v", e, y[e], want)
				}
			}
		})
	}
}

// TestKQuantElementMap checks the bit positions drawn in doc.go: for every
// element e of each K-quant, a block whose only nonzero quant bits are e's
// dequantizes to a value at e that differs from all others.
func TestKQuantElementMap(t *testing.T) {
	type setter func(blk []byte, e int)
	tests := []struct {
		name string
		t    gguf.Type
		init func(blk []byte) // scales such that a set bit changes y[e]
		set  setter
	}{
		{"Q2_K", gguf.TypeQ2_K,
			func(b []byte) {
				for s := 0; s < 16; s++ {
					b[OffQ2_KScales+s] = 1
				}
				copy(b[OffQ2_KD:], f16bytes(1))
			},
			func(b []byte, e int) {
				h, r := e/128, e%128
				b[OffQ2_KQs+32*h+r%32] |= 1 << (2 * (r / 32))
			}},
		{"Q3_K", gguf.TypeQ3_K,
			func(b []byte) {
				copy(b[OffQ3_KScales:], rep(0x11, 8)) // scale 1 + high bits 2 -> 33-32 = 1
				copy(b[OffQ3_KScales+8:], rep(0xaa, 4))
				copy(b[OffQ3_KD:], f16bytes(1))
				for i := 0; i < 32; i++ { // all high bits set: q = 0 everywhere
					b[OffQ3_KHmask+i] = 0xff
				}
			},
			func(b []byte, e int) {
				h, r := e/128, e%128
				b[OffQ3_KQs+32*h+r%32] |= 1 << (2 * (r / 32))
			}},
		{"Q3_K hmask", gguf.TypeQ3_K,
			func(b []byte) {
				copy(b[OffQ3_KScales:], rep(0x11, 8))
				copy(b[OffQ3_KScales+8:], rep(0xaa, 4))
				copy(b[OffQ3_KD:], f16bytes(1))
				for i := 0; i < 64; i++ { // all low bits 3, high bit clear: q = -1
					b[OffQ3_KQs+i] = 0xff
				}
			},
			func(b []byte, e int) { b[OffQ3_KHmask+e%32] |= 1 << (e / 32) }},
		{"Q4_K", gguf.TypeQ4_K,
			func(b []byte) {
				copy(b[OffQ4_KD:], f16bytes(1))
				copy(b[OffQ4_KScales:], []byte{1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1})
			},
			func(b []byte, e int) {
				g, r := e/64, e%64
				if r < 32 {
					b[OffQ4_KQs+32*g+r] |= 0x01
				} else {
					b[OffQ4_KQs+32*g+r-32] |= 0x10
				}
			}},
		{"Q5_K qh", gguf.TypeQ5_K,
			func(b []byte) {
				copy(b[OffQ5_KD:], f16bytes(1))
				copy(b[OffQ5_KScales:], []byte{1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1})
			},
			func(b []byte, e int) {
				g, r := e/64, e%64
				bit := 2 * g
				if r >= 32 {
					bit++
				}
				b[OffQ5_KQh+r%32] |= 1 << bit
			}},
		{"Q6_K", gguf.TypeQ6_K,
			func(b []byte) {
				for s := 0; s < 16; s++ {
					b[OffQ6_KScales+s] = 1
				}
				copy(b[OffQ6_KD:], f16bytes(1))
			},
			func(b []byte, e int) {
				h, r := e/128, e%128
				l, p := r%32, r/32
				i := OffQ6_KQl + 64*h + l + 32*(p&1)
				if p < 2 {
					b[i] |= 0x01
				} else {
					b[i] |= 0x10
				}
			}},
		{"Q6_K qh", gguf.TypeQ6_K,
			func(b []byte) {
				for s := 0; s < 16; s++ {
					b[OffQ6_KScales+s] = 1
				}
				copy(b[OffQ6_KD:], f16bytes(1))
			},
			func(b []byte, e int) {
				h, r := e/128, e%128
				b[OffQ6_KQh+32*h+r%32] |= 1 << (2 * (r / 32))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := make([]byte, tc.t.BlockBytes())
			tc.init(base)
			y0 := make([]float32, QK_K)
			if err := Dequantize(tc.t, base, y0); err != nil {
				t.Fatal(err)
			}
			y := make([]float32, QK_K)
			blk := make([]byte, len(base))
			for e := 0; e < QK_K; e++ {
				copy(blk, base)
				tc.set(blk, e)
				if err := Dequantize(tc.t, blk, y); err != nil {
					t.Fatal(err)
				}
				for i := range y {
					if (i == e) == (y[i] == y0[i]) {
						t.Fatalf("setting element %d's bit: y[%d] = %v (was %v)", e, i, y[i], y0[i])
					}
				}
			}
		})
	}
}

// TestActivationVersusReference pins the documented difference between the
// AVX2 activation quantizer and the reference one on an exact tie.
func TestActivationVersusReference(t *testing.T) {
	x := make([]float32, 32)
	x[0] = 127 // amax 127: d = 1, both ids exactly 1
	x[1] = 2.5
	x[2] = -2.5
	x[3] = 3.5
	ref := make([]byte, BlockBytesQ8_0)
	act := make([]byte, BlockBytesQ8_0)
	QuantizeQ8_0(x, ref)
	QuantizeActQ8_0(x, act)
	if got := []int8{int8(ref[3]), int8(ref[4]), int8(ref[5])}; got[0] != 3 || got[1] != -3 || got[2] != 4 {
		t.Errorf("reference (roundf, half away): %v, want [3 -3 4]", got)
	}
	if got := []int8{int8(act[3]), int8(act[4]), int8(act[5])}; got[0] != 2 || got[1] != -2 || got[2] != 4 {
		t.Errorf("activation (half to even): %v, want [2 -2 4]", got)
	}
	// Q8_1 s = d * sum(q): 127 + 2 - 2 + 4 = 131
	q1 := make([]byte, BlockBytesQ8_1)
	QuantizeActQ8_1(x, q1)
	if got := F16ToF32(binary.LittleEndian.Uint16(q1[2:])); got != 131 {
		t.Errorf("Q8_1 s = %v, want 131", got)
	}
}

func TestQ8KBsums(t *testing.T) {
	x := make([]float32, QK_K)
	gen(0, 42, x)
	b := make([]byte, BlockBytesQ8_K)
	QuantizeQ8_K(x, b)
	for s := 0; s < 16; s++ {
		sum := 0
		for _, q := range b[OffQ8_KQs+16*s : OffQ8_KQs+16*s+16] {
			sum += int(int8(q))
		}
		if got := int(int16(binary.LittleEndian.Uint16(b[OffQ8_KBsums+2*s:]))); got != sum {
			t.Errorf("bsums[%d] = %d, want %d", s, got, sum)
		}
	}
	// the element of largest magnitude maps to exactly -127 (iscale = -127/max)
	max, _ := absMax(x)
	for i, v := range x {
		if v == max && int8(b[OffQ8_KQs+i]) != -127 {
			t.Errorf("max element %d quantized to %d, want -127", i, int8(b[OffQ8_KQs+i]))
		}
	}
}

func TestScaleHelpers(t *testing.T) {
	// packScalesK4 and ScaleMinK4 are inverses for all 6-bit pairs.
	for trial := 0; trial < 64; trial++ {
		var ls, lm [8]uint8
		for j := range ls {
			ls[j] = uint8((trial*7 + j*13) % 64)
			lm[j] = uint8((trial*11 + j*5 + 3) % 64)
		}
		s := make([]byte, KScaleSize)
		for j := 0; j < 8; j++ {
			packScalesK4(j, ls[j], lm[j], s)
		}
		for j := 0; j < 8; j++ {
			if sc, m := ScaleMinK4(j, s); sc != ls[j] || m != lm[j] {
				t.Fatalf("trial %d sub-block %d: got (%d,%d), want (%d,%d)", trial, j, sc, m, ls[j], lm[j])
			}
		}
	}
	// UnpackQ3KScales on a hand-packed field: scale s stored as s+... see doc.go
	raw := []byte{0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 0b11100100, 0, 0, 0xff}
	var sc [16]int8
	UnpackQ3KScales(raw, &sc)
	want := [16]int8{
		0 | 0<<4 - 32, 2 | 0<<4 - 32, 4 | 0<<4 - 32, 6 | 3<<4 - 32, // high bits from raw[8..11] >> 0
		8 | 1<<4 - 32, 10 | 0<<4 - 32, 12 | 0<<4 - 32, 14 | 3<<4 - 32, // >> 2
		1 | 2<<4 - 32, 3 | 0<<4 - 32, 5 | 0<<4 - 32, 7 | 3<<4 - 32, // >> 4
		9 | 3<<4 - 32, 11 | 0<<4 - 32, 13 | 0<<4 - 32, 15 | 3<<4 - 32, // >> 6
	}
	if sc != want {
		t.Errorf("UnpackQ3KScales = %v, want %v", sc, want)
	}
}
