package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ropeRef rotates one head in float64 with angle theta(i) per pair.
func ropeRef(head []float32, dims int, neox bool, theta func(i int) float64) []float64 {
	out := make([]float64, len(head))
	for i, v := range head {
		out[i] = float64(v)
	}
	for i := 0; i < dims/2; i++ {
		a, b := 2*i, 2*i+1
		if neox {
			a, b = i, i+dims/2
		}
		c, s := math.Cos(theta(i)), math.Sin(theta(i))
		x0, x1 := float64(head[a]), float64(head[b])
		out[a] = x0*c - x1*s
		out[b] = x0*s + x1*c
	}
	return out
}

// TestRoPEFormula checks Apply against the rotation formula twice: with
// ggml's float32 angles (theta_{i+1} = theta_i * powf(base, -2/dims), then
// scale and freq factor) rotated in float64 (tight: only the float32
// rotation differs), and with exact float64 angles p*base^(-2i/dims), where
// ggml's float32 recurrence drifts by up to about p*i*2^-23 radians.
func TestRoPEFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		name string
		rope RoPE
	}{
		{"llama", RoPE{HeadDim: 64, Base: 10000}},
		{"neox", RoPE{HeadDim: 64, Base: 1000000, Neox: true}},
		{"scaled", RoPE{HeadDim: 32, Base: 10000, FreqScale: 0.25}},
		{"freq factors", RoPE{HeadDim: 16, Base: 500000, FreqFactors: []float32{1, 1, 2, 4, 8, 8, 8, 8}}},
		{"partial neox", RoPE{HeadDim: 48, Dims: 16, Base: 10000, Neox: true}},
		{"partial normal", RoPE{HeadDim: 12, Dims: 8, Base: 10000}},
	} {
		rp := tc.rope
		d := rp.dims()
		const nTok, nHeads = 5, 3
		positions := []int32{0, 1, 17, 511, 4000}
		x := randFloats(r, nTok*nHeads*rp.HeadDim, 1)
		got := append([]float32(nil), x...)
		rp.Apply(got, nTok, nHeads, positions)
		fs := float64(rp.FreqScale)
		if fs == 0 {
			fs = 1
		}
		ts := float32(math.Pow(float64(rp.Base), float64(-2/float32(d))))
		for tok := 0; tok < nTok; tok++ {
			p := positions[tok]
			ggmlTheta := func(i int) float64 {
				th := float32(p)
				for k := 0; k < i; k++ {
					th *= ts
				}
				if rp.FreqFactors != nil {
					th /= rp.FreqFactors[i]
				}
				return float64(float32(fs) * th)
			}
			exactTheta := func(i int) float64 {
				th := float64(p) * math.Pow(float64(rp.Base), -2*float64(i)/float64(d)) * fs
				if rp.FreqFactors != nil {
					th /= float64(rp.FreqFactors[i])
				}
				return th
			}
			for h := 0; h < nHeads; h++ {
				off := (tok*nHeads + h) * rp.HeadDim
				head := x[off : off+rp.HeadDim]
				tight := ropeRef(head, d, rp.Neox, ggmlTheta)
				loose := ropeRef(head, d, rp.Neox, exactTheta)
				drift := float64(p) * float64(d) * 0x1p-23 * 4
				for i := range head {
					g := float64(got[off+i])
					if math.Abs(g-tight[i]) > 1e-6 {
						t.Fatalf("%s pos %d head %d [%d] = %g, want %g (ggml angles)", tc.name, p, h, i, g, tight[i])
					}
					if math.Abs(g-loose[i]) > 1e-6+drift {
						t.Fatalf("%s pos %d head %d [%d] = %g, want %g (exact angles, drift %g)", tc.name, p, h, i, g, loose[i], drift)
					}
				}
				for i := d; i < rp.HeadDim; i++ {
					if got[off+i] != head[i] {
						t.Fatalf("%s: element %d beyond the rotated dims changed", tc.name, i)
					}
				}
			}
		}
	}
}

// TestRoPEKnownValues: hand-computed rotations.
func TestRoPEKnownValues(t *testing.T) {
	// One pair, position 1: angle 1 rad whatever the base.
	rp := RoPE{HeadDim: 2, Base: 10000}
	x := []float32{1, 0}
	rp.Apply(x, 1, 1, []int32{1})
	if math.Abs(float64(x[0])-math.Cos(1)) > 1e-7 || math.Abs(float64(x[1])-math.Sin(1)) > 1e-7 {
		t.Fatalf("(1,0) at pos 1 -> %v, want (cos 1, sin 1)", x)
	}
	// Position 0 is the identity.
	rp = RoPE{HeadDim: 8, Base: 10000, Neox: true}
	y := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	rp.Apply(y, 1, 1, []int32{0})
	for i, v := range y {
		if v != float32(i+1) {
			t.Fatalf("pos 0 changed element %d to %g", i, v)
		}
	}
	// Neox pairs i with i+2 in a 4-dim head: base 1 makes all angles = pos.
	rp = RoPE{HeadDim: 4, Base: 1, Neox: true}
	z := []float32{1, 1, 0, 0}
	rp.Apply(z, 1, 1, []int32{2})
	c, s := float32(math.Cos(2)), float32(math.Sin(2))
	for i, want := range []float32{c, c, s, s} {
		if math.Abs(float64(z[i]-want)) > 1e-7 {
			t.Fatalf("neox [%d] = %g, want %g", i, z[i], want)
		}
	}
}

func TestRoPEValidate(t *testing.T) {
	for _, rp := range []RoPE{
		{HeadDim: 0, Base: 10000},
		{HeadDim: 7, Base: 10000},
		{HeadDim: 8, Dims: 10, Base: 10000},
		{HeadDim: 8, Base: 0},
		{HeadDim: 8, Base: 10000, FreqScale: -1},
		{HeadDim: 8, Base: 10000, FreqFactors: []float32{1, 2}},
	} {
		if rp.Validate() == nil {
			t.Errorf("Validate accepted %+v", rp)
		}
		mustPanic(t, "Apply with invalid config", func() { rp.Apply(make([]float32, 64), 1, 1, []int32{0}) })
	}
	rp := RoPE{HeadDim: 8, Base: 10000}
	mustPanic(t, "short x", func() { rp.Apply(make([]float32, 15), 1, 2, []int32{0}) })
	mustPanic(t, "short positions", func() { rp.Apply(make([]float32, 16), 2, 1, []int32{0}) })
	x, pos := make([]float32, 16), []int32{3, 9}
	if a := testing.AllocsPerRun(10, func() { rp.Apply(x, 2, 1, pos) }); a != 0 {
		t.Errorf("Apply allocates %v times", a)
	}
}

// TestSincosfKnown: values where glibc's sincosf (so ggml's RoPE) is not
// the correctly rounded sine or cosine, and the three argument ranges.
func TestSincosfKnown(t *testing.T) {
	for _, tc := range []struct{ x, sin, cos float32 }{
		{0, 0, 1},
		{0x1p-13, 0x1p-13, 1}, // tiny: sin x = x
		{0x1.00015p-1, 0x1.eaf0d4p-2, 0x1.c151ep-1}, // correctly rounded sin: 0x1.eaf0d6p-2
		{0x1.0001b2p-1, 0x1.eaf18p-2, 0x1.c151bp-1}, // correctly rounded sin: 0x1.eaf182p-2
		{-3, -0x1.210386p-3, -0x1.fae04cp-1},        // |x| < 120: one-step reduction
		{1000, 0x1.a75cc2p-1, 0x1.1ff026p-1},        // large: 4/pi table reduction
	} {
		s, c := sincosf(tc.x)
		if math.Float32bits(s) != math.Float32bits(tc.sin) || math.Float32bits(c) != math.Float32bits(tc.cos) {
			t.Errorf("sincosf(%x) = %x, %x; want %x, %x", tc.x, s, c, tc.sin, tc.cos)
		}
	}
	if s, c := sincosf(float32(math.Inf(1))); s == s || c == c {
		t.Errorf("sincosf(+Inf) = %v, %v; want NaN", s, c)
	}
}

// TestSincosfGgml: sincosf against glibc's on a sweep of float32 bit
// patterns of both signs (about 1.7 million values, all three ranges).
func TestSincosfGgml(t *testing.T) {
	x := floatSweep(5003)
	got := make([]float32, 2*len(x))
	for i, v := range x {
		got[2*i], got[2*i+1] = sincosf(v)
	}
	checkGgml(t, "sincosf sweep", ggmlRecord(int32(4), int32(len(x)), x), got, "688fedc272e77eb6")
}

// TestRoPEGgml: Apply against ggml_rope_ext (ext_factor 0, attn_factor 1,
// as llama.cpp's llama/qwen graphs call it) at positions up to 40000.
func TestRoPEGgml(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	ff := make([]float32, 32)
	for i := range ff {
		ff[i] = float32(1 + r.IntN(8))
	}
	for _, tc := range []struct {
		name   string
		rope   RoPE
		heads  int
		nTok   int
		maxPos int
		want   string
	}{
		{"llama", RoPE{HeadDim: 64, Base: 10000}, 4, 300, 40000, "2aa24e96122ef524"},
		{"neox 128", RoPE{HeadDim: 128, Base: 1000000, Neox: true}, 2, 300, 40000, "6b7bd77b73ddf837"},
		{"neox scaled", RoPE{HeadDim: 64, Base: 10000, FreqScale: 0.25, Neox: true}, 2, 100, 5000, "e4dd1bb2caa7beaf"},
		{"llama3 freq factors", RoPE{HeadDim: 64, Base: 500000, FreqFactors: ff}, 2, 200, 9000, "0b840638aaa98099"},
		{"partial neox", RoPE{HeadDim: 48, Dims: 16, Base: 10000, Neox: true}, 3, 50, 3000, "598b2641b798090a"},
	} {
		rp := tc.rope
		x := randFloats(r, tc.nTok*tc.heads*rp.HeadDim, 1)
		pos := make([]int32, tc.nTok)
		for i := range pos {
			pos[i] = int32(r.IntN(tc.maxPos))
		}
		pos[0] = 0
		got := append([]float32(nil), x...)
		rp.Apply(got, tc.nTok, tc.heads, pos)
		mode, fs, hasFF := int32(0), rp.FreqScale, int32(0)
		if rp.Neox {
			mode = 2
		}
		if fs == 0 {
			fs = 1
		}
		rec := ggmlRecord(int32(1), []int32{mode, int32(rp.HeadDim), int32(tc.heads), int32(tc.nTok), int32(rp.dims())}, rp.Base, fs)
		if rp.FreqFactors != nil {
			hasFF = 1
		}
		rec = append(rec, ggmlRecord(hasFF, x, pos)...)
		if rp.FreqFactors != nil {
			rec = append(rec, ggmlRecord(rp.FreqFactors[:rp.dims()/2])...)
		}
		checkGgml(t, tc.name, rec, got, tc.want)
	}
}
