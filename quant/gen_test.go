package quant

import "math"

// Deterministic inputs, transcribed from testdata/ggmlref/gen.h so the Go
// tests and the C harness that ran llama.cpp see identical bits.

type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// unif is a 24-bit signed integer times 2^-23: uniform in [-1, 1).
func (r *splitmix) unif() float32 {
	return float32(int32(r.next()>>40)-(1<<23)) * math.Float32frombits(0x34000000)
}

func pow2(e int) float32 { return math.Float32frombits(uint32(e+127) << 23) }

// numGenSets is the number of input sets gen knows (0..6).
const numGenSets = 7

// gen fills x with input set `set` (0 uniform, 1 bell-shaped, 2 wide
// exponent range, 3 quarter-integer grid full of rounding ties, 4 per-32
// shapes: zeros, constants, outliers, tiny, large, one-signed, ±ties;
// 5 exact rounding ties for the 8-bit quantizers, 6 near-ties).
func gen(set int, seed uint64, x []float32) {
	r := &splitmix{s: seed*1000003 + uint64(set)}
	for i := range x {
		switch set {
		case 0:
			x[i] = r.unif()
		case 1:
			a := r.unif()
			b := r.unif()
			c := r.unif()
			d := r.unif()
			x[i] = ((a + b) + (c + d)) * 0.5
		case 2:
			u := r.unif()
			e := int(r.next()%48) - 24
			x[i] = u * pow2(e)
		case 3:
			x[i] = float32(int(r.next()%33)-16) * 0.25
		}
	}
	if set == 5 {
		// amax = 127*2^e, the rest (k+0.5)*2^e: x*127/amax hits .5 ties.
		for g := 0; g < len(x)/32; g++ {
			y := x[32*g : 32*g+32]
			s := pow2(int(r.next()%8) - 4)
			for j := range y {
				k := int(r.next()%252) - 126
				y[j] = (float32(k) + 0.5) * s
			}
			at := r.next() % 32
			if r.next()&1 == 1 {
				y[at] = 127 * s
			} else {
				y[at] = -127 * s
			}
		}
		return
	}
	if set == 6 {
		// random amax m, the rest (k+0.5)*(m/127): x*id lands within an ulp
		// or two of a .5 tie, where 127/m and 1/(m/127) can disagree.
		for g := 0; g < len(x)/32; g++ {
			y := x[32*g : 32*g+32]
			m := (fabsf(r.unif()) + 0.5) * pow2(int(r.next()%16)-8)
			d := m / 127
			for j := range y {
				k := int(r.next()%252) - 126
				y[j] = (float32(k) + 0.5) * d
			}
			at := r.next() % 32
			if r.next()&1 == 1 {
				y[at] = m
			} else {
				y[at] = -m
			}
		}
		return
	}
	if set != 4 {
		return
	}
	for g := 0; g < len(x)/32; g++ {
		y := x[32*g : 32*g+32]
		mode := r.next() % 8
		c := r.unif()
		for j := range y {
			u := r.unif()
			switch mode {
			case 0:
				y[j] = 0
			case 1:
				y[j] = c
			case 2:
				if j == 7 {
					y[j] = 100 * c
				} else {
					y[j] = u * 0.01
				}
			case 3:
				y[j] = u * pow2(-120)
			case 4:
				y[j] = u * 16384
			case 5:
				y[j] = -fabsf(u)
			case 6:
				y[j] = fabsf(u) + 1
			default:
				if j%2 == 1 {
					y[j] = c
				} else {
					y[j] = -c
				}
			}
		}
	}
}
