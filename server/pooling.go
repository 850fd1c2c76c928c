package server

import (
	"fmt"
	"math"
)

// Pooling turns a prompt's final-norm hidden rows into one embedding:
// "last" (the last position's row: vLLM's default for decoder models, and
// what llama.cpp returns for a model without <arch>.pooling_type), "mean"
// (the rows' average) or "cls" (the first position's row).
const (
	PoolLast = "last"
	PoolMean = "mean"
	PoolCLS  = "cls"
)

// PoolingFromGGUF maps llama.cpp's <arch>.pooling_type enum (0 none,
// 1 mean, 2 cls, 3 last, 4 rank) to a Pooling; "" for none, rank or an
// unknown value (the serve default applies).
func PoolingFromGGUF(t int) string {
	switch t {
	case 1:
		return PoolMean
	case 2:
		return PoolCLS
	case 3:
		return PoolLast
	}
	return ""
}

// poolRows reports how many of a prompt's last positions pooling needs
// the hidden rows of: 1 for last, every position for mean and cls.
func poolRows(pooling string, promptLen int) int {
	if pooling == PoolLast {
		return 1
	}
	return promptLen
}

// pool reduces rows ([n][dim], the prompt's last n positions in order, as
// poolRows asked) to one [dim] vector, L2-normalised when normalize is
// set (a zero vector stays zero). Sums are in float64: a mean of long
// prompts keeps float32's precision.
func pool(pooling string, rows []float32, dim int, normalize bool) ([]float32, error) {
	n := len(rows) / dim
	if n == 0 || n*dim != len(rows) {
		return nil, fmt.Errorf("pool: %d values are not rows of %d", len(rows), dim)
	}
	acc := make([]float64, dim)
	switch pooling {
	case PoolLast:
		for j, v := range rows[(n-1)*dim:] {
			acc[j] = float64(v)
		}
	case PoolCLS:
		for j, v := range rows[:dim] {
			acc[j] = float64(v)
		}
	case PoolMean:
		for i := range n {
			for j, v := range rows[i*dim : (i+1)*dim] {
				acc[j] += float64(v)
			}
		}
		for j := range acc {
			acc[j] /= float64(n)
		}
	default:
		return nil, fmt.Errorf("pool: unknown pooling %q", pooling)
	}
	scale := 1.0
	if normalize {
		var ss float64
		for _, v := range acc {
			ss += v * v
		}
		if ss > 0 {
			scale = 1 / math.Sqrt(ss)
		}
	}
	out := make([]float32, dim)
	for j, v := range acc {
		out[j] = float32(v * scale)
	}
	return out, nil
}
