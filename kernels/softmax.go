package kernels

// Softmax replaces x by softmax(x) in place, as ggml's soft_max without
// scale or mask: subtract the float32 max, e^ (exp32), sum in float64,
// multiply by float32(1/sum). An empty x is left as is; a row of all -Inf
// becomes NaN, as in ggml.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	mx := x[0]
	for _, v := range x[1:] {
		if v > mx {
			mx = v
		}
	}
	var sum float64
	for i, v := range x {
		e := exp32(v - mx)
		x[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}
