package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLogfKnown: glibc's logf (x86-64, FMA ifunc), printed by a C program
// on glibc 2.36; the last three are inputs where it is not the correctly
// rounded value (float32(math.Log(x)) would give the commented one). The
// port matched glibc on all of every 97th float32 bit pattern (44M inputs).
func TestLogfKnown(t *testing.T) {
	for _, tc := range []struct{ x, want float32 }{
		{0x1.009c2p-1, -0x1.61ac4ep-1},
		{0x1.00b758p-1, -0x1.617602p-1},
		{4, 0x1.62e43p+0},
		{1e6, 0x1.ba18aap+3},
		{10000, 0x1.26bb1cp+3},
		{500000, 0x1.a3ea66p+3},
		{0.25, -0x1.62e43p+0},
		{0x1p-140, -0x1.842994p+6}, // subnormal
		{1, 0},
		{0x1.800b92p+0, 0x1.9f511ap-2}, // correctly rounded: 0x1.9f5118p-2
		{0x1.6348e6p+2, 0x1.b6cb1ap+0}, // 0x1.b6cb18p+0
		{0x1.48b32cp+4, 0x1.82e32p+1},  // 0x1.82e322p+1
	} {
		if got := logf(tc.x); got != tc.want {
			t.Errorf("logf(%x) = %x, want %x", tc.x, got, tc.want)
		}
	}
	if got := logf(0); !math.IsInf(float64(got), -1) {
		t.Errorf("logf(0) = %v, want -Inf", got)
	}
	if got := logf(-1); got == got {
		t.Errorf("logf(-1) = %v, want NaN", got)
	}
}

// TestRoPEYaRNFormula checks YaRN against the formula of the YaRN paper
// (and transformers' _compute_yarn_parameters) in float64: pairs whose
// wavelength fits more than beta_fast times in the original context keep
// their trained angle, those fitting fewer than beta_slow times are
// interpolated by 1/factor, a linear ramp in between, and cos and sin are
// scaled by attn * (1 + 0.1 ln factor). Bounds: ggml's float32 angle
// recurrence drifts by up to about p*i*2^-23 radians.
func TestRoPEYaRNFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, tc := range []struct {
		name string
		rope RoPE
	}{
		{"qwen2 neox", RoPE{HeadDim: 64, Base: 1e6, FreqScale: 0.25, Neox: true, ExtFactor: 1, OrigContext: 64, BetaFast: 32, BetaSlow: 1}},
		{"qwen3 head 128", RoPE{HeadDim: 128, Base: 1e6, FreqScale: 0.25, Neox: true, ExtFactor: 1, OrigContext: 64, BetaFast: 32, BetaSlow: 1, AttnFactor: 0.9}},
		{"normal base 1e4", RoPE{HeadDim: 32, Base: 10000, FreqScale: 0.125, ExtFactor: 1, OrigContext: 4096, BetaFast: 32, BetaSlow: 1}},
		{"half ext", RoPE{HeadDim: 32, Base: 10000, FreqScale: 0.5, ExtFactor: 0.5, OrigContext: 256, BetaFast: 32, BetaSlow: 1}},
	} {
		rp := tc.rope
		d := rp.dims()
		positions := []int32{0, 1, 63, 64, 200, 255, 20000}
		nTok, nHeads := len(positions), 2
		x := randFloats(r, nTok*nHeads*rp.HeadDim, 1)
		got := append([]float32(nil), x...)
		rp.Apply(got, nTok, nHeads, positions)
		fs, base := float64(rp.FreqScale), float64(rp.Base)
		corr := func(beta float64) float64 {
			return float64(d) * math.Log(float64(rp.OrigContext)/(beta*2*math.Pi)) / (2 * math.Log(base))
		}
		lo, hi := math.Max(0, math.Floor(corr(float64(rp.BetaFast)))), math.Min(float64(d-1), math.Ceil(corr(float64(rp.BetaSlow))))
		attn := float64(rp.AttnFactor)
		if attn == 0 {
			attn = 1
		}
		mscale := attn * (1 + 0.1*math.Log(1/fs))
		for tok, p := range positions {
			theta := func(i int) float64 {
				e := float64(p) * math.Pow(base, -2*float64(i)/float64(d))
				mix := (1 - math.Min(1, math.Max(0, (float64(i)-lo)/math.Max(0.001, hi-lo)))) * float64(rp.ExtFactor)
				return fs*e*(1-mix) + e*mix
			}
			drift := float64(p) * float64(d) * 0x1p-23 * 4
			for h := 0; h < nHeads; h++ {
				off := (tok*nHeads + h) * rp.HeadDim
				want := ropeRef(x[off:off+rp.HeadDim], d, rp.Neox, theta)
				for i := range want {
					want[i] *= mscale
					if g := float64(got[off+i]); math.Abs(g-want[i]) > 2e-6+drift {
						t.Fatalf("%s pos %d head %d [%d] = %g, want %g", tc.name, p, h, i, g, want[i])
					}
				}
			}
		}
	}
}

// TestRoPEYaRNOffUnchanged: ExtFactor 0 and AttnFactor 0 or 1 are the
// plain (and linear) rotation, bit for bit; YaRN changes it.
func TestRoPEYaRNOffUnchanged(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	positions := []int32{0, 5, 100, 3000}
	x := randFloats(r, len(positions)*2*64, 1)
	apply := func(rp RoPE) []float32 {
		out := append([]float32(nil), x...)
		rp.Apply(out, len(positions), 2, positions)
		return out
	}
	plain := apply(RoPE{HeadDim: 64, Base: 1e6, FreqScale: 0.25, Neox: true})
	same := apply(RoPE{HeadDim: 64, Base: 1e6, FreqScale: 0.25, Neox: true, AttnFactor: 1, OrigContext: 64, BetaFast: 32, BetaSlow: 1})
	yarn := apply(RoPE{HeadDim: 64, Base: 1e6, FreqScale: 0.25, Neox: true, ExtFactor: 1, OrigContext: 64, BetaFast: 32, BetaSlow: 1})
	for i := range plain {
		if math.Float32bits(plain[i]) != math.Float32bits(same[i]) {
			t.Fatalf("[%d]: %x with YaRN off, %x plain", i, same[i], plain[i])
		}
	}
	differ := 0
	for i := range plain {
		if plain[i] != yarn[i] {
			differ++
		}
	}
	if differ < len(plain)/2 {
		t.Fatalf("YaRN changed only %d of %d elements", differ, len(plain))
	}
}

func TestRoPEYaRNValidate(t *testing.T) {
	for _, tc := range []struct {
		rope RoPE
		want string
	}{
		{RoPE{HeadDim: 8, Base: 1e4, ExtFactor: 1, BetaFast: 32, BetaSlow: 1}, "original context"},
		{RoPE{HeadDim: 8, Base: 1e4, ExtFactor: 1, OrigContext: 64, BetaSlow: 1}, "beta_fast"},
		{RoPE{HeadDim: 8, Base: 1e4, AttnFactor: -1}, "attn factor"},
		{RoPE{HeadDim: 8, Base: 1e4, ExtFactor: float32(math.NaN()), OrigContext: 64, BetaFast: 32, BetaSlow: 1}, "ext factor"},
	} {
		if err := tc.rope.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate = %v, want one mentioning %q", tc.rope, err, tc.want)
		}
	}
}
