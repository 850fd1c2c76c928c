package sample

import "math"

// minP keeps the tokens whose probability is at least p times the most
// likely one's, i.e. logit >= max + ln(p) (llama.cpp's form: no softmax
// needed). The most likely token always stays. It compacts c in place and
// returns the kept prefix.
func minP(c []candidate, p float32) []candidate {
	if len(c) == 0 {
		return c
	}
	maxLogit := c[0].logit
	for _, x := range c[1:] {
		maxLogit = max(maxLogit, x.logit)
	}
	threshold := maxLogit + float32(math.Log(float64(p)))
	n := 0
	for _, x := range c {
		if x.logit >= threshold {
			c[n] = x
			n++
		}
	}
	return c[:n]
}
