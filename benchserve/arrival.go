package benchserve

import (
	"math"
	"math/rand/v2"
	"time"
)

// Arrivals returns the send times of n requests, as offsets from the start
// of a run, for a Poisson process of rate requests per second: the gaps
// are independent exponential draws with mean 1/rate. The first request
// goes at 0 (no idle wait before the first). rate +Inf (or <= 0) sends all
// at once: every offset is 0.
func Arrivals(n int, rate float64, rng *rand.Rand) []time.Duration {
	at := make([]time.Duration, n)
	if math.IsInf(rate, 1) || rate <= 0 || math.IsNaN(rate) {
		return at
	}
	t := 0.0 // seconds
	for i := 1; i < n; i++ {
		t += rng.ExpFloat64() / rate
		at[i] = time.Duration(t * float64(time.Second))
	}
	return at
}
