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

// FuzzDequantize: any bytes of any supported type dequantize without panic.
func FuzzDequantize(f *testing.F) {
	f.Add(uint8(2), bytes.Repeat([]byte{0xff}, 18))
	f.Add(uint8(12), bytes.Repeat([]byte{0x7c}, 144))
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		ts := supportedTypes()
		ty := ts[int(sel)%len(ts)]
		nb := len(data) / ty.BlockBytes()
		src := data[:nb*ty.BlockBytes()]
		dst := make([]float32, nb*ty.BlockSize())
		if err := Dequantize(ty, src, dst); err != nil {
			t.Fatal(err)
		}
	})
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
