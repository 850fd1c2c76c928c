package kernels

import (
	"fmt"
	"math"
)

// RoPE rotates query/key head vectors by position (rotary position
// embedding), as ggml_rope_ext with ext_factor 0 and attn_factor 1
// (ggml-cpu ops.cpp: ggml_rope_cache_init, rope_yarn, rotate_pairs).
//
// For pair i (0 <= i < Dims/2) of a token at position p:
//
//	theta_i = FreqScale * (p * base^(-2i/Dims)) / FreqFactors[i]
//	(a, b) -> (a*cos theta_i - b*sin theta_i, a*sin theta_i + b*cos theta_i)
//
// where p*base^(-2i/Dims) is computed as ggml does, by repeated float32
// multiplication: theta_0 = float32(p), theta_{i+1} = theta_i * powf(base, -2/Dims);
// cos and sin are float32 values of the float32 angle.
//
// Which elements form pair i of a head h[0:HeadDim]:
//
//	normal (llama):      (h[2i], h[2i+1])
//	neox (qwen2, qwen3): (h[i],  h[i+Dims/2])
//	h[Dims:HeadDim] is left as is (partial rotary).
//
// The zero value of FreqScale means 1, of Dims means HeadDim.
type RoPE struct {
	HeadDim     int       // elements per head
	Dims        int       // leading elements of each head that rotate (ggml n_dims); 0 = HeadDim
	Base        float32   // rope_freq_base (10000 for llama)
	FreqScale   float32   // 1/linear scaling factor; 0 = 1
	FreqFactors []float32 // [Dims/2] divisors of each pair's frequency (llama3 rope_freqs), nil = all 1
	Neox        bool      // pair i with i+Dims/2 instead of 2i with 2i+1
}

// Validate checks the configuration.
func (r *RoPE) Validate() error {
	d := r.dims()
	switch {
	case r.HeadDim <= 0 || d <= 0 || d > r.HeadDim || d%2 != 0:
		return fmt.Errorf("kernels: RoPE dims %d of head %d must be even, positive and at most the head size", d, r.HeadDim)
	case !(r.Base > 0):
		return fmt.Errorf("kernels: RoPE base %v must be positive", r.Base)
	case r.FreqScale < 0:
		return fmt.Errorf("kernels: RoPE freq scale %v must not be negative", r.FreqScale)
	case r.FreqFactors != nil && len(r.FreqFactors) < d/2:
		return fmt.Errorf("kernels: RoPE has %d freq factors, needs %d", len(r.FreqFactors), d/2)
	}
	return nil
}

func (r *RoPE) dims() int {
	if r.Dims == 0 {
		return r.HeadDim
	}
	return r.Dims
}

// maxStackPairs bounds the per-token cos/sin table kept on the stack.
const maxStackPairs = 512

// Apply rotates x in place: x is [nTok][nHeads][HeadDim] and token t sits at
// positions[t]. It panics if the configuration is invalid (see Validate) or
// the slices are too short. It allocates nothing for Dims <= 1024.
func (r *RoPE) Apply(x []float32, nTok, nHeads int, positions []int32) {
	if err := r.Validate(); err != nil {
		panic(err.Error())
	}
	if nTok < 0 || nHeads < 0 || len(x) < nTok*nHeads*r.HeadDim || len(positions) < nTok {
		panic(fmt.Sprintf("kernels: RoPE.Apply %d tokens x %d heads x %d: x has %d elements, %d positions",
			nTok, nHeads, r.HeadDim, len(x), len(positions)))
	}
	d := r.dims()
	half := d / 2
	var stack [2 * maxStackPairs]float32
	cache := stack[:]
	if half > maxStackPairs {
		cache = make([]float32, 2*half)
	}
	cache = cache[:2*half] // [half] pairs of (cos, sin)
	freqScale := r.FreqScale
	if freqScale == 0 {
		freqScale = 1
	}
	thetaScale := float32(math.Pow(float64(r.Base), float64(-2/float32(d))))
	hd := r.HeadDim
	for t := 0; t < nTok; t++ {
		r.cache(cache, positions[t], freqScale, thetaScale)
		row := x[t*nHeads*hd : (t+1)*nHeads*hd]
		for h := 0; h < nHeads; h++ {
			v := row[h*hd : h*hd+d]
			if r.Neox {
				a, b := v[:half], v[half:d]
				for i := 0; i < half; i++ {
					c, s := cache[2*i], cache[2*i+1]
					x0, x1 := a[i], b[i]
					a[i] = float32(x0*c) - float32(x1*s)
					b[i] = float32(x0*s) + float32(x1*c)
				}
			} else {
				for i := 0; i < half; i++ {
					c, s := cache[2*i], cache[2*i+1]
					x0, x1 := v[2*i], v[2*i+1]
					v[2*i] = float32(x0*c) - float32(x1*s)
					v[2*i+1] = float32(x0*s) + float32(x1*c)
				}
			}
		}
	}
}

// cache fills cs with the (cos, sin) of every pair's angle at position pos.
func (r *RoPE) cache(cs []float32, pos int32, freqScale, thetaScale float32) {
	theta := float32(pos)
	for i := 0; i < len(cs)/2; i++ {
		ext := theta
		if r.FreqFactors != nil {
			ext = theta / r.FreqFactors[i]
		}
		a := float64(freqScale * ext)
		cs[2*i] = float32(math.Cos(a))
		cs[2*i+1] = float32(math.Sin(a))
		theta *= thetaScale
	}
}
