package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"sort"
	"testing"

	"kiln/gguf"
)

// supportedTypes lists the types Quantize/Dequantize handle, in a stable order.
func supportedTypes() []gguf.Type {
	var ts []gguf.Type
	for t := range quantizers {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}

// FuzzDequantize: any bytes of any supported type dequantize without panic,
// and:
//   - the row is the concatenation of its blocks dequantized one at a time
//     (no state carried between blocks);
//   - F16 goes through the lookup table, which must equal the generic
//     bitwise conversion (f16ToF32Slow) bit for bit, and F32 and BF16 are
//     exact widenings;
//   - a block whose scales are finite dequantizes to finite values (the
//     quants are bounded integers, so only a NaN or Inf scale may give a
//     NaN or Inf; Q8_K's float32 scale also needs |d| <= MaxFloat32/128).
func FuzzDequantize(f *testing.F) {
	f.Add(uint8(2), bytes.Repeat([]byte{0xff}, 18))
	f.Add(uint8(12), bytes.Repeat([]byte{0x7c}, 144))
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		ts := supportedTypes()
		ty := ts[int(sel)%len(ts)]
		bb, bs := ty.BlockBytes(), ty.BlockSize()
		nb := len(data) / bb
		src := data[:nb*bb]
		dst := make([]float32, nb*bs)
		if err := Dequantize(ty, src, dst); err != nil {
			t.Fatal(err)
		}
		one := make([]float32, bs)
		for b := range nb {
			blk := src[b*bb : (b+1)*bb]
			if err := Dequantize(ty, blk, one); err != nil {
				t.Fatal(err)
			}
			got := dst[b*bs : (b+1)*bs]
			for i := range one {
				if math.Float32bits(one[i]) != math.Float32bits(got[i]) {
					t.Fatalf("%s block %d element %d: %#x in the row, %#x alone", ty, b, i, math.Float32bits(got[i]), math.Float32bits(one[i]))
				}
				var want float32
				switch ty {
				case gguf.TypeF16:
					want = f16ToF32Slow(binary.LittleEndian.Uint16(blk[2*i:]))
				case gguf.TypeBF16:
					want = math.Float32frombits(uint32(binary.LittleEndian.Uint16(blk[2*i:])) << 16)
				case gguf.TypeF32:
					want = math.Float32frombits(binary.LittleEndian.Uint32(blk[4*i:]))
				default:
					continue
				}
				if math.Float32bits(want) != math.Float32bits(got[i]) {
					t.Fatalf("%s element %d: %#x, generic conversion %#x", ty, b*bs+i, math.Float32bits(got[i]), math.Float32bits(want))
				}
			}
			if !scalesFinite(ty, blk) {
				continue
			}
			for i, v := range got {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s block %d element %d: %g from finite scales (block % x)", ty, b, i, v, blk)
				}
			}
		}
	})
}

// halfScales lists, per block type, the byte offsets of its F16 scales
// (d, and dmin or m where the format has one): ggml's block layouts.
var halfScales = map[gguf.Type][]int{
	gguf.TypeQ4_0: {0}, gguf.TypeQ4_1: {0, 2}, gguf.TypeQ5_0: {0}, gguf.TypeQ5_1: {0, 2},
	gguf.TypeQ8_0: {0}, gguf.TypeQ8_1: {0}, // Q8_1's s (at 2) is not used to dequantize
	gguf.TypeQ2_K: {80, 82}, gguf.TypeQ3_K: {108}, gguf.TypeQ4_K: {0, 2}, gguf.TypeQ5_K: {0, 2},
	gguf.TypeQ6_K: {208},
}

// scalesFinite reports whether a block's scales are finite (and, for the
// float types, whether every element is: each is its own scale).
func scalesFinite(ty gguf.Type, blk []byte) bool {
	fin := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
	switch ty {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16:
		return false // checked element by element against the generic conversion
	case gguf.TypeQ8_K:
		d := math.Float32frombits(binary.LittleEndian.Uint32(blk))
		return fin(d) && math.Abs(float64(d)) <= math.MaxFloat32/128
	}
	offs, ok := halfScales[ty]
	if !ok {
		panic("quant fuzz: no scale layout for " + ty.String())
	}
	for _, o := range offs {
		if !fin(f16ToF32Slow(binary.LittleEndian.Uint16(blk[o:]))) {
			return false
		}
	}
	return true
}

// FuzzQuantize: any float32 bits quantize without panic, deterministically,
// and the result dequantizes; finite Q8_0 rows stay within the format's
// error bound.
func FuzzQuantize(f *testing.F) {
	seed := make([]byte, 4*QK_K)
	for i := 0; i < QK_K; i++ {
		binary.LittleEndian.PutUint32(seed[4*i:], math.Float32bits(float32(i%17)-8))
	}
	f.Add(uint8(8), seed)
	f.Add(uint8(14), bytes.Repeat([]byte{0x00, 0x00, 0xc0, 0x7f}, QK_K)) // NaNs
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		ts := supportedTypes()
		ty := ts[int(sel)%len(ts)]
		n := len(data) / 4 / ty.BlockSize() * ty.BlockSize()
		x := make([]float32, n)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		nbytes, _ := ty.RowBytes(n)
		q1, q2 := make([]byte, nbytes), make([]byte, nbytes)
		if err := Quantize(ty, x, q1); err != nil {
			t.Fatal(err)
		}
		if err := Quantize(ty, x, q2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q1, q2) {
			t.Fatal("quantizing twice gave different bytes")
		}
		y := make([]float32, n)
		if err := Dequantize(ty, q1, y); err != nil {
			t.Fatal(err)
		}
		if ty != gguf.TypeQ8_0 {
			return
		}
		for b := 0; b < n/QK8_0; b++ {
			xb, yb := x[32*b:32*b+32], y[32*b:32*b+32]
			finite := true
			for _, v := range xb {
				finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
			}
			amax := maxAbsRef(xb)
			if !finite || amax > 60000 {
				continue // NaN poisons amax; big values overflow the f16 scale (as in ggml)
			}
			// half a step of d = amax/127, plus d's f16 rounding on up to 127
			// steps, plus the f16 subnormal floor of d.
			bound := float64(amax)*(0.5/127+1.0/2048)*1.01 + 127*0x1p-24
			for i := range xb {
				if e := math.Abs(float64(xb[i]) - float64(yb[i])); e > bound {
					t.Fatalf("block %d element %d: x %g y %g error %g > %g", b, i, xb[i], yb[i], e, bound)
				}
			}
		}
	})
}
