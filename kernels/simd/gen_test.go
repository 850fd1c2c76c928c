package simd

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// Test-input builders: rows of raw ggml blocks, random or adversarial. They
// fill bytes directly (every bit pattern of the quants is reachable) and
// keep the redundant fields consistent: Q8_1's s = d*sum(q) as f16, Q8_K's
// bsums = sums of 16 quants.

// Modes of generated blocks.
var modes = []string{
	"random",  // random quants, moderate scales
	"extreme", // every quant at its min or max (int8 -128/127, nibbles 0/15)
	"max",     // all quants at max
	"min",     // all quants at min
	"zero",    // all bytes zero (zero scales and quants)
	"tiny",    // subnormal f16 scales, 1e-8 f32 scales
	"huge",    // scales near 1e4
	"mixed",   // each block picks one of the above
}

// format describes one block layout for the generator: where the f16
// scales are, where the quants are and whether they are int8 or packed.
type format struct {
	name  string
	block int // elements per block
	bytes int // bytes per block
	// f16 scale field offsets (d first); for Q8_K, d is an f32 at 0.
	f16 []int
	// [lo, hi) byte range of packed unsigned quants (nibbles, qh, ql).
	packLo, packHi int
	// [lo, hi) byte range of int8 quants.
	i8Lo, i8Hi int
	// [lo, hi) byte range of K-quant scale bytes (any bit pattern is valid).
	scLo, scHi int
}

var formats = map[string]format{
	"Q8_0": {name: "Q8_0", block: 32, bytes: 34, f16: []int{0}, i8Lo: 2, i8Hi: 34},
	"Q8_1": {name: "Q8_1", block: 32, bytes: 36, f16: []int{0}, i8Lo: 4, i8Hi: 36},
	"Q4_0": {name: "Q4_0", block: 32, bytes: 18, f16: []int{0}, packLo: 2, packHi: 18},
	"Q4_1": {name: "Q4_1", block: 32, bytes: 20, f16: []int{0, 2}, packLo: 4, packHi: 20},
	"Q5_0": {name: "Q5_0", block: 32, bytes: 22, f16: []int{0}, packLo: 2, packHi: 22},
	"Q5_1": {name: "Q5_1", block: 32, bytes: 24, f16: []int{0, 2}, packLo: 4, packHi: 24},
	"Q2_K": {name: "Q2_K", block: 256, bytes: 84, f16: []int{80, 82}, scLo: 0, scHi: 16, packLo: 16, packHi: 80},
	"Q3_K": {name: "Q3_K", block: 256, bytes: 110, f16: []int{108}, packLo: 0, packHi: 96, scLo: 96, scHi: 108},
	"Q4_K": {name: "Q4_K", block: 256, bytes: 144, f16: []int{0, 2}, scLo: 4, scHi: 16, packLo: 16, packHi: 144},
	"Q5_K": {name: "Q5_K", block: 256, bytes: 176, f16: []int{0, 2}, scLo: 4, scHi: 16, packLo: 16, packHi: 176},
	"Q6_K": {name: "Q6_K", block: 256, bytes: 210, f16: []int{208}, packLo: 0, packHi: 192, scLo: 192, scHi: 208},
	"Q8_K": {name: "Q8_K", block: 256, bytes: 292, i8Lo: 4, i8Hi: 260},
}

// genRow returns nb blocks of format f in the given mode.
func genRow(r *rand.Rand, f format, nb int, mode string) []byte {
	out := make([]byte, nb*f.bytes)
	for i := range nb {
		genBlock(r, f, out[i*f.bytes:(i+1)*f.bytes], mode)
	}
	return out
}

func genBlock(r *rand.Rand, f format, b []byte, mode string) {
	if mode == "mixed" {
		mode = modes[r.IntN(len(modes)-1)]
	}
	if mode == "zero" {
		clear(b)
		return
	}
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	pack, i8 := b[f.packLo:f.packHi], b[f.i8Lo:f.i8Hi]
	switch mode {
	case "extreme":
		for i := range pack {
			pack[i] = [4]byte{0x00, 0x0f, 0xf0, 0xff}[r.IntN(4)]
		}
		for i := range i8 {
			i8[i] = [2]byte{0x80, 0x7f}[r.IntN(2)]
		}
	case "max":
		fill(pack, 0xff)
		fill(i8, 0x7f)
		fill(b[f.scLo:f.scHi], 0xff)
	case "min":
		fill(pack, 0x00)
		fill(i8, 0x80)
	}
	for _, off := range f.f16 {
		binary.LittleEndian.PutUint16(b[off:], F32ToF16(genScale(r, mode)))
		if mode == "tiny" {
			sub := uint16(1 + r.IntN(0x3ff)) // subnormal half
			if r.IntN(2) == 0 {
				sub |= 0x8000
			}
			binary.LittleEndian.PutUint16(b[off:], sub)
		}
	}
	switch f.name {
	case "Q8_1":
		fixQ8_1(b)
	case "Q8_K":
		binary.LittleEndian.PutUint32(b, math.Float32bits(genScale(r, mode)))
		var sums [16]int32
		for j := range 256 {
			sums[j/16] += int32(int8(b[4+j]))
		}
		for j, s := range sums {
			binary.LittleEndian.PutUint16(b[260+2*j:], uint16(int16(s)))
		}
	}
}

// fixQ8_1 sets s = d*sum(q), shrinking d where s would overflow f16.
func fixQ8_1(b []byte) {
	var sum int32
	for _, q := range b[4:36] {
		sum += int32(int8(q))
	}
	d := F16ToF32(binary.LittleEndian.Uint16(b))
	for math.Abs(float64(d)*float64(sum)) > 65000 {
		d /= 4
		binary.LittleEndian.PutUint16(b, F32ToF16(d))
		d = F16ToF32(binary.LittleEndian.Uint16(b))
	}
	binary.LittleEndian.PutUint16(b[2:], F32ToF16(d*float32(sum)))
}

func genScale(r *rand.Rand, mode string) float32 {
	s := float32(1)
	if r.IntN(2) == 0 {
		s = -1
	}
	switch mode {
	case "tiny":
		return s * 1e-8 * (1 + r.Float32())
	case "huge":
		return s * 1e4 * (0.5 + r.Float32()/2)
	}
	return s * float32((0.5+1.5*r.Float64())*math.Pow(10, -3*r.Float64()))
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

// randF32 returns n floats in [-scale, scale).
func randF32(r *rand.Rand, n int, scale float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = scale * (2*r.Float32() - 1)
	}
	return out
}

// randF16 returns n halves of values in [-scale, scale).
func randF16(r *rand.Rand, n int, scale float32) []uint16 {
	out := make([]uint16, n)
	for i := range out {
		out[i] = F32ToF16(scale * (2*r.Float32() - 1))
	}
	return out
}
