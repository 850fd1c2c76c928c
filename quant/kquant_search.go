package quant

// Scale searches of ggml's reference K-quantizers (make_qx_quants,
// make_q3_quants, make_qkx2_quants in ggml-quants.c), transcribed operation
// for operation: same loop order, same float32 rounding points, products
// rounded before they are accumulated (float32(a*b)) so that no FMA is
// formed. Any change of order here changes bits in the output.

// groupMaxEps is GROUP_MAX_EPS: groups with max |x| below it are all-zero.
const groupMaxEps float32 = 1e-15

// clampInt returns v limited to [lo, hi].
func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

// makeQxQuants fits a symmetric scale to x[:n] with levels in
// [-nmax, nmax-1], stores the levels + nmax in L and returns the scale
// (ggml's make_qx_quants). rmseType selects the error weights: 0 = no search,
// 1 = x², 2 = 1, 3 = |x|, else sqrt|x|; negative = return early. qw, when not
// nil, overrides the weights.
func makeQxQuants(n, nmax int, x []float32, L []int8, rmseType int, qw []float32) float32 {
	x = x[:n]
	L = L[:n]
	max, amax := absMax(x)
	if amax < groupMaxEps {
		for i := range L {
			L[i] = 0
		}
		return 0
	}
	iscale := float32(-nmax) / max
	if rmseType == 0 {
		for i := range x {
			l := nearestInt(iscale * x[i])
			L[i] = int8(nmax + clampInt(l, -nmax, nmax-1))
		}
		return 1 / iscale
	}
	returnEarly := false
	if rmseType < 0 {
		rmseType = -rmseType
		returnEarly = true
	}
	weight := func(i int) float32 {
		switch {
		case qw != nil:
			return qw[i]
		case rmseType == 1:
			return x[i] * x[i]
		case rmseType == 2:
			return 1
		case rmseType == 3:
			return fabsf(x[i])
		default:
			return sqrtf(fabsf(x[i]))
		}
	}
	var sumlx, suml2 float32
	for i := range x {
		l := clampInt(nearestInt(iscale*x[i]), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w, fl := weight(i), float32(l)
		sumlx += float32(w * x[i] * fl)
		suml2 += float32(w * fl * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	if returnEarly {
		if suml2 > 0 {
			return 0.5 * (scale + 1/iscale)
		}
		return 1 / iscale
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / max
		sumlx, suml2 = 0, 0
		for i := range x {
			l := clampInt(nearestInt(iscale*x[i]), -nmax, nmax-1)
			w, fl := weight(i), float32(l)
			sumlx += float32(w * x[i] * fl)
			suml2 += float32(w * fl * fl)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i := range x {
				l := nearestInt(iscale * x[i])
				L[i] = int8(nmax + clampInt(l, -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants fits a symmetric scale to x[:n] with levels in
// [-nmax, nmax-1] (stored + nmax in L), refining levels one at a time to
// minimise the x²-weighted error when doRMSE (ggml's make_q3_quants).
func makeQ3Quants(n, nmax int, x []float32, L []int8, doRMSE bool) float32 {
	x = x[:n]
	L = L[:n]
	max, amax := absMax(x)
	if amax < groupMaxEps {
		for i := range L {
			L[i] = 0
		}
		return 0
	}
	iscale := float32(-nmax) / max
	if doRMSE {
		var sumlx, suml2 float32
		for i := range x {
			l := clampInt(nearestInt(iscale*x[i]), -nmax, nmax-1)
			L[i] = int8(l)
			w, fl := float32(x[i]*x[i]), float32(l)
			sumlx += float32(w * x[i] * fl)
			suml2 += float32(w * fl * fl)
		}
		for itry := 0; itry < 5; itry++ {
			nChanged := 0
			for i := range x {
				w := float32(x[i] * x[i])
				fL := float32(L[i])
				slx := sumlx - float32(w*x[i]*fL)
				if slx > 0 {
					sl2 := suml2 - float32(w*fL*fL)
					newL := clampInt(nearestInt(x[i]*sl2/slx), -nmax, nmax-1)
					if newL != int(L[i]) {
						fn := float32(newL)
						slx += float32(w * x[i] * fn)
						sl2 += float32(w * fn * fn)
						if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
							L[i] = int8(newL)
							sumlx, suml2 = slx, sl2
							nChanged++
						}
					}
				}
			}
			if nChanged == 0 {
				break
			}
		}
		for i := range L {
			L[i] += int8(nmax)
		}
		if suml2 > 0 {
			return sumlx / suml2
		}
		return 0
	}
	for i := range x {
		l := clampInt(nearestInt(iscale*x[i]), -nmax, nmax-1)
		L[i] = int8(l + nmax)
	}
	return 1 / iscale
}

// makeQKX2Quants fits an asymmetric scale and min to x[:n] with levels in
// [0, nmax] (ggml's make_qkx2_quants): start from (max-min)/nmax, then try
// nstep+1 scales (rmin + rdelta*is + nmax)/(max-min), solving the weighted
// least-squares scale and min for each set of levels and keeping the one of
// lowest weighted error (squared, or absolute when useMAD). Returns the scale
// and -min (the "min" stored by the K-quants is subtracted).
func makeQKX2Quants(n, nmax int, x, weights []float32, L, Laux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (scale, theMin float32) {
	x = x[:n]
	weights = weights[:n]
	L = L[:n]
	Laux = Laux[:n]
	min, max := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < min {
			min = x[i]
		}
		if x[i] > max {
			max = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if min > 0 {
		min = 0
	}
	if max == min {
		for i := range L {
			L[i] = 0
		}
		return 0, -min
	}
	fnmax := float32(nmax)
	iscale := fnmax / (max - min)
	scale = 1 / iscale
	errOf := func(diff float32) float32 {
		if useMAD {
			return fabsf(diff)
		}
		return diff * diff
	}
	var bestError float32
	for i := range x {
		l := nearestInt(iscale * (x[i] - min))
		L[i] = uint8(clampInt(l, 0, nmax))
		diff := float32(scale*float32(L[i])) + min - x[i]
		bestError += float32(weights[i] * errOf(diff))
	}
	if nstep < 1 {
		return scale, -min
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + fnmax) / (max - min)
		var sumL, sumL2, sumXL float32
		for i := range x {
			l := clampInt(nearestInt(iscale*(x[i]-min)), 0, nmax)
			Laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := range x {
				diff := float32(thisScale*float32(Laux[i])) + thisMin - x[i]
				curError += float32(weights[i] * errOf(diff))
			}
			if curError < bestError {
				copy(L, Laux)
				bestError = curError
				scale = thisScale
				min = thisMin
			}
		}
	}
	return scale, -min
}
