package synth

import "math"

// llama3RopeFactors returns the rope_freqs.weight tensor ([headDim/2]
// float32) that convert_hf_to_gguf.py (LlamaModel.generate_extra_tensors)
// writes for a rope_scaling of type "llama3". llama.cpp applies Llama 3's
// frequency scaling only through this tensor: frequency i of RoPE is divided
// by factor[i].
//
//	freq_i    = 1 / theta^(2i/headDim)                 (float32, as torch)
//	wavelen_i = 2*pi / freq_i
//	factor_i  = 1                  wavelen < origCtx/high    (high frequencies kept)
//	          = factor             wavelen > origCtx/low     (low frequencies stretched)
//	          = 1 / ((1-smooth)/factor + smooth)   otherwise,
//	  smooth  = (origCtx/wavelen - low) / (high - low)
//
// The script computes freq, wavelen and smooth as float32 torch scalars;
// so does this function, with torch's scalar-by-tensor division written out
// as it evaluates (a / t is reciprocal(t) * a).
func llama3RopeFactors(headDim int, theta float64, r Llama3Rope) []float32 {
	n := headDim / 2
	out := make([]float32, n)
	lowWavelen := float64(r.OriginalContext) / r.LowFreqFactor // Python floats (float64)
	highWavelen := float64(r.OriginalContext) / r.HighFreqFactor
	for i := range out {
		// torch.arange(0, dim, 2, dtype=float32) / dim, then base ** that, then 1.0 / that.
		exp := float32(2*i) / float32(headDim)
		pow := float32(math.Pow(theta, float64(exp)))
		freq := (1 / pow) * 1
		wavelen := (1 / freq) * float32(2*math.Pi)
		switch {
		case float64(wavelen) < highWavelen:
			out[i] = 1
		case float64(wavelen) > lowWavelen:
			out[i] = float32(r.Factor)
		default:
			smooth := ((1/wavelen)*float32(r.OriginalContext) - float32(r.LowFreqFactor)) /
				float32(r.HighFreqFactor-r.LowFreqFactor)
			out[i] = (1 / ((1-smooth)/float32(r.Factor) + smooth)) * 1
		}
	}
	return out
}
