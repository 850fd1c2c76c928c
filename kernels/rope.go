package kernels

import (
	"fmt"
	"math"

	"kiln/kernels/simd"
)

// RoPE rotates query/key head vectors by position (rotary position
// embedding), as ggml_rope_ext (ggml-cpu ops.cpp: ggml_rope_cache_init,
// rope_yarn, rotate_pairs).
//
// For pair i (0 <= i < Dims/2) of a token at position p:
//
//	theta_i = FreqScale * (p * base^(-2i/Dims)) / FreqFactors[i]
//	(a, b) -> (a*cos theta_i - b*sin theta_i, a*sin theta_i + b*cos theta_i) * AttnFactor
//
// YaRN (ExtFactor != 0, llama.cpp's yarn_ext_factor): the angle blends the
// interpolated theta_i above with the unscaled e_i = p*base^(-2i/Dims)/FreqFactors[i],
// and cos and sin get a magnitude scale, as ggml's rope_yarn:
//
//	[lo, hi] = ggml_rope_yarn_corr_dims(Dims, OrigContext, Base, BetaFast, BetaSlow)
//	mix_i    = (1 - clamp((i - lo) / max(0.001, hi - lo), 0, 1)) * ExtFactor
//	theta_i  = fma(theta_i, 1 - mix_i, e_i*mix_i)
//	scale    = AttnFactor * fma(0.1, logf(1/FreqScale), 1)
//
// so the high-frequency pairs (i < lo) keep their trained angles and the
// low-frequency ones (i > hi) are interpolated by FreqScale.
//
// with the arithmetic of llama.cpp's CPU backend, bit for bit:
//   - p*base^(-2i/Dims) is computed as ggml does, by repeated float32
//     multiplication: theta_0 = float32(p), theta_{i+1} = theta_i * powf(base, -2/Dims);
//   - cos and sin are glibc's sincosf of the float32 angle (sincosf below),
//     not the correctly rounded values: glibc's differ in the last bit for
//     about 1% of angles, and ggml calls glibc;
//   - the rotation is contracted into FMAs as the compiled ggml kernel does
//     (gcc -march=haswell): a' = fma(a, cos, -(b*sin)), b' = fma(a, sin, b*cos),
//     with b*sin and b*cos rounded to float32.
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

	// AttnFactor multiplies cos and sin (ggml attn_factor; for YaRN models
	// llama.cpp's yarn_attn_factor, see model.Config.RopeAttnFactor); 0 = 1.
	AttnFactor float32
	// YaRN: ExtFactor 0 turns it off; otherwise OrigContext (the trained
	// context, ggml n_ctx_orig) must be positive and BetaFast, BetaSlow
	// (llama.cpp's defaults are 32 and 1) set the correction range.
	ExtFactor          float32
	OrigContext        int
	BetaFast, BetaSlow float32
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
	case r.AttnFactor < 0 || isNaNOrInf(r.AttnFactor):
		return fmt.Errorf("kernels: RoPE attn factor %v must be finite and not negative", r.AttnFactor)
	case isNaNOrInf(r.ExtFactor):
		return fmt.Errorf("kernels: RoPE YaRN ext factor %v must be finite", r.ExtFactor)
	case r.ExtFactor != 0 && r.OrigContext <= 0:
		return fmt.Errorf("kernels: RoPE YaRN needs a positive original context, have %d", r.OrigContext)
	case r.ExtFactor != 0 && (!(r.BetaFast > 0) || !(r.BetaSlow > 0) || isNaNOrInf(r.BetaFast) || isNaNOrInf(r.BetaSlow)):
		return fmt.Errorf("kernels: RoPE YaRN beta_fast %v and beta_slow %v must be positive", r.BetaFast, r.BetaSlow)
	}
	return nil
}

func isNaNOrInf(x float32) bool { return x != x || math.IsInf(float64(x), 0) }

// yarn is the per-call state of the angle computation (see RoPE).
type yarn struct {
	freqScale, thetaScale float32
	ext                   float32    // ExtFactor
	corr                  [2]float32 // ggml corr_dims: first and last pair of the blend
	mscale                float32    // multiplies cos and sin
}

// yarnCorrDim is ggml_rope_yarn_corr_dim (ggml.c): the pair index whose
// wavelength fits nRot times in the original context, in float32:
// nDims * logf(nCtxOrig / (nRot*2*pi)) / (2*logf(base)).
func yarnCorrDim(nDims, nCtxOrig int, nRot, base float32) float32 {
	return float32(nDims) * logf(float32(nCtxOrig)/(nRot*2*float32(math.Pi))) / (2 * logf(base))
}

// params computes the angle parameters as ggml_compute_forward_rope_flt.
func (r *RoPE) params() yarn {
	d := r.dims()
	y := yarn{freqScale: r.FreqScale, ext: r.ExtFactor, mscale: r.AttnFactor}
	if y.freqScale == 0 {
		y.freqScale = 1
	}
	if y.mscale == 0 {
		y.mscale = 1
	}
	y.thetaScale = float32(math.Pow(float64(r.Base), float64(-2/float32(d))))
	if y.ext != 0 {
		// ggml_rope_yarn_corr_dims: floor of the fast end, ceil of the slow
		// end, clamped to [0, Dims-1].
		lo := float32(math.Floor(float64(yarnCorrDim(d, r.OrigContext, r.BetaFast, r.Base))))
		hi := float32(math.Ceil(float64(yarnCorrDim(d, r.OrigContext, r.BetaSlow, r.Base))))
		y.corr = [2]float32{max(0, lo), min(float32(d-1), hi)}
		// rope_yarn's mscale *= 1.0f + 0.1f*logf(1.0f/freq_scale), contracted
		// into an FMA in the compiled kernel.
		y.mscale = fmaf(0.1, logf(1/y.freqScale), 1) * y.mscale
	}
	return y
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
	var stack [5 * maxStackPairs]float32
	buf := stack[:]
	if half > maxStackPairs {
		buf = make([]float32, 5*half)
	}
	// Per token: cs [half] pairs (cos, sin); then for normal pairs csw
	// [half] pairs (-sin, cos), for neox c, s, sn [half] each.
	cs, rest := buf[:2*half], buf[2*half:5*half]
	csw := rest[:2*half]
	c, sn, s := rest[:half], rest[half:2*half], rest[2*half:3*half]
	y := r.params()
	hd := r.HeadDim
	for t := 0; t < nTok; t++ {
		r.cache(cs, positions[t], &y)
		row := x[t*nHeads*hd : (t+1)*nHeads*hd]
		if r.Neox {
			for i := 0; i < half; i++ {
				c[i], s[i], sn[i] = cs[2*i], cs[2*i+1], -cs[2*i+1]
			}
			simd.RotateHalves(row, nHeads, hd, half, c, s, sn)
			continue
		}
		for i := 0; i < half; i++ {
			csw[2*i], csw[2*i+1] = -cs[2*i+1], cs[2*i]
		}
		simd.RotateInterleaved(row, nHeads, hd, d, cs, csw)
	}
}

// cache fills cs with the (cos, sin) of every pair's angle at position pos,
// as ggml_rope_cache_init and rope_yarn compiled for haswell.
func (r *RoPE) cache(cs []float32, pos int32, y *yarn) {
	theta := float32(pos)
	for i := 0; i < len(cs)/2; i++ {
		ext := theta
		if r.FreqFactors != nil {
			ext = theta / r.FreqFactors[i]
		}
		th := y.freqScale * ext
		if y.ext != 0 {
			// rope_yarn_ramp(lo, hi, i0) with i0/2 = i.
			v := (float32(i) - y.corr[0]) / max(0.001, y.corr[1]-y.corr[0])
			mix := (1 - min(1, max(0, v))) * y.ext
			th = fmaf(th, 1-mix, ext*mix)
		}
		s, c := sincosf(th)
		if y.mscale != 1 {
			s, c = s*y.mscale, c*y.mscale
		}
		cs[2*i+1], cs[2*i] = s, c
		theta *= y.thetaScale
	}
}

// sincosf returns sin x and cos x as glibc's sincosf does on x86-64 with
// FMA (glibc 2.28 and later: the float variant of ARM's optimized routines,
// built for the ifunc that runs on AVX2+FMA CPUs), bit for bit. llama.cpp's
// RoPE calls it for every angle; the correctly rounded values differ from
// it in the last bit for about 1% of the angles RoPE uses.
//
// The argument is reduced to r in [-pi/4, pi/4] and quadrant n: directly
// for |x| < pi/4, by r = x - n*pi/2 (one FMA) for |x| < 120, and with a
// 192-bit 4/pi table for larger |x|. Then two even/odd polynomials in r,
// evaluated in float64 with FMAs where the compiled code has them, give
// sin and cos of r, swapped and negated by quadrant, and each is rounded
// once to float32.
func sincosf(y float32) (sin, cos float32) {
	x := float64(y)
	top := math.Float32bits(y) >> 20 & 0x7ff
	switch {
	case top < 0x3f4: // |y| < pi/4
		if top < 0x398 { // |y| < 2^-12: sin y = y, cos y = 1 in float32
			return y, 1
		}
		return sincosfPoly(x, x*x, &sincosfTab[0], 0)
	case top < 0x42f: // |y| < 120
		n := (int32(x*0x1.45f306dc9c883p+23) + 0x800000) >> 24 // round(x * 2/pi), 2/pi pre-scaled by 2^24
		r := math.FMA(-float64(n), 0x1.921fb54442d18p+0, x)    // x - n*pi/2
		p := &sincosfTab[n>>1&1]
		return sincosfPoly(r*sincosfSign[n&3], r*r, p, n)
	case top < 0x7f8: // |y| >= 120, finite
		xi := math.Float32bits(y)
		sign := int32(xi >> 31)
		r, n := sincosfReduceLarge(xi)
		p := &sincosfTab[(n+sign)>>1&1]
		return sincosfPoly(r*sincosfSign[(n+sign)&3], r*r, p, n)
	default: // Inf or NaN
		nan := y - y
		return nan, nan
	}
}

// sincosfCoef are the polynomial coefficients of one quadrant pair: cos r ~
// c0 + c1 r^2 + c2 r^4 + c3 r^6 + c4 r^8 and sin r ~ r + s1 r^3 + s2 r^5 + s3 r^7.
// The second entry has the cosine negated (quadrants 2 and 3).
type sincosfCoef struct{ c0, c1, c2, c3, c4, s1, s2, s3 float64 }

var sincosfTab = [2]sincosfCoef{
	{1, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
	{-1, 0x1.ffffffd0c621cp-2, -0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
}

// sincosfSign is the sign of the sine in quadrants 0..3.
var sincosfSign = [4]float64{1, -1, -1, 1}

// sincosfPoly evaluates both polynomials at the reduced argument: x is r
// with the quadrant's sine sign applied, x2 = r*r. An odd quadrant n swaps
// the results. The operation order and FMA contractions are those of the
// compiled glibc code.
func sincosfPoly(x, x2 float64, p *sincosfCoef, n int32) (sin, cos float32) {
	x3 := x2 * x
	x4 := x2 * x2
	x5 := x2 * x3
	x6 := x2 * x4
	s1 := math.FMA(x2, p.s3, p.s2)
	c2 := math.FMA(x2, p.c4, p.c3)
	c1 := math.FMA(x2, p.c1, p.c0)
	s := math.FMA(x3, p.s1, x)
	c := math.FMA(x4, p.c2, c1)
	sin = float32(math.FMA(s1, x5, s))
	cos = float32(math.FMA(c2, x6, c))
	if n&1 != 0 {
		return cos, sin
	}
	return sin, cos
}

// sincosfInvPio4 holds 4/pi to 192 bits: entry i is bits [8i-24, 8i+8) of
// its binary fraction, so that any 96-bit window starts at a whole entry.
var sincosfInvPio4 = [24]uint32{
	0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
	0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
	0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
}

// sincosfReduceLarge reduces |x| >= 2 (xi: its float32 bits, sign ignored)
// modulo pi/2 with integer arithmetic: the 24-bit mantissa times a 96-bit
// window of 4/pi gives the fraction of x*2/pi in 2.62 fixed point; n is its
// rounded integer part (mod 4) and the remainder times pi/2 is returned.
func sincosfReduceLarge(xi uint32) (r float64, n int32) {
	arr := sincosfInvPio4[xi>>26&15:]
	shift := xi >> 23 & 7
	m := (xi&0xffffff | 0x800000) << shift
	res0 := uint64(m * arr[0]) // low 32 bits only, as the C code's uint32 product
	res1 := uint64(m) * uint64(arr[4])
	res2 := uint64(m) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	q := (res0 + 1<<61) >> 62
	res0 -= q << 62
	return float64(int64(res0)) * 0x1.921fb54442d18p-62, int32(q)
}
