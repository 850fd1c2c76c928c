package benchserve

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Run is one benchmark run's traffic shape.
type Run struct {
	// RequestRate is the Poisson arrival rate in requests per second;
	// +Inf sends every request at once.
	RequestRate float64
	// MaxConcurrency caps the requests in flight (0: no cap). A request
	// whose arrival time has come waits for a free slot, in arrival order.
	MaxConcurrency int
	// Seed seeds the arrival times.
	Seed uint64
}

// Arrivals returns the send times of n requests under r: Arrivals with
// r.RequestRate and a generator seeded from r.Seed, the same for every run
// with the same seed.
func (r Run) Arrivals(n int) []time.Duration {
	return Arrivals(n, r.RequestRate, rand.New(rand.NewPCG(r.Seed, 0xa77)))
}

// Measurement is what one run recorded.
type Measurement struct {
	// Outputs are the requests' outputs, in the order of the requests.
	Outputs []Output
	// Start is when the run began (the first request's arrival time).
	Start time.Time
	// Duration runs from Start to the end of the last stream.
	Duration time.Duration
}

// Execute sends reqs through c with r's arrival process and concurrency
// cap. A failed request is an Output with its Error, never an error of
// Execute, which returns an error only when ctx ends (the requests in
// flight are then cancelled and the measurement is partial).
func (r Run) Execute(ctx context.Context, c *Client, reqs []Request) (Measurement, error) {
	arrivals := r.Arrivals(len(reqs))
	outs := make([]Output, len(reqs))
	var slots chan struct{}
	if r.MaxConcurrency > 0 {
		slots = make(chan struct{}, r.MaxConcurrency)
	}
	var wg sync.WaitGroup
	start := time.Now()
	var err error
dispatch:
	for i, req := range reqs {
		if wait := time.Until(start.Add(arrivals[i])); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				err = ctx.Err()
				break dispatch
			}
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				err = ctx.Err()
				break dispatch
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = c.Do(ctx, req)
			if slots != nil {
				<-slots
			}
		}()
	}
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	return Measurement{Outputs: outs, Start: start, Duration: time.Since(start)}, err
}
