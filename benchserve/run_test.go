package benchserve

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"kiln/benchserve/fakeserver"
)

// TestArrivalsArePoisson: seeded exponential gaps have the exponential
// distribution's moments and median (mean 1/rate, standard deviation
// 1/rate, median ln2/rate), and the process is reproducible.
func TestArrivalsArePoisson(t *testing.T) {
	const n, rate = 20000, 50.0
	at := Arrivals(n, rate, rand.New(rand.NewPCG(7, 7)))
	if at[0] != 0 {
		t.Fatalf("first arrival at %v, want 0", at[0])
	}
	gaps := make([]float64, n-1)
	for i := 1; i < n; i++ {
		if at[i] < at[i-1] {
			t.Fatalf("arrivals go back in time at %d", i)
		}
		gaps[i-1] = (at[i] - at[i-1]).Seconds()
	}
	s := NewStats(gaps)
	mean := 1 / rate
	// Standard error of the mean is mean/sqrt(n) = 0.7%; allow 3%.
	if math.Abs(s.Mean-mean)/mean > 0.03 {
		t.Errorf("mean gap %.5f s, want %.5f", s.Mean, mean)
	}
	if math.Abs(s.Std-mean)/mean > 0.05 {
		t.Errorf("gap std %.5f s, want %.5f (exponential: std = mean)", s.Std, mean)
	}
	if med := mean * math.Ln2; math.Abs(s.Median-med)/med > 0.04 {
		t.Errorf("median gap %.5f s, want %.5f", s.Median, med)
	}
	// A count of arrivals in fixed windows is Poisson: variance = mean.
	window := 0.2 // s; 10 arrivals expected per window
	counts := map[int]float64{}
	for _, a := range at {
		counts[int(a.Seconds()/window)]++
	}
	var cs []float64
	for w := 0; w < int(at[n-1].Seconds()/window); w++ {
		cs = append(cs, counts[w])
	}
	cst := NewStats(cs)
	if d := cst.Std * cst.Std / cst.Mean; d < 0.85 || d > 1.15 {
		t.Errorf("window counts: variance/mean %.3f, want 1 (mean %.2f)", d, cst.Mean)
	}
	again := Arrivals(n, rate, rand.New(rand.NewPCG(7, 7)))
	for i := range at {
		if at[i] != again[i] {
			t.Fatal("same seed, different arrivals")
		}
	}
	for _, r := range []float64{math.Inf(1), 0} {
		for _, a := range Arrivals(5, r, rand.New(rand.NewPCG(1, 1))) {
			if a != 0 {
				t.Fatalf("rate %v: arrival at %v, want all at 0", r, a)
			}
		}
	}
}

// TestRequestRateIsHonoured: no request is sent before its arrival time,
// nor long after it when the server is fast (the bound allows for a
// loaded machine).
func TestRequestRateIsHonoured(t *testing.T) {
	s := fakeserver.New(0, 0)
	defer s.Close()
	c := newClient(s, CompletionsPath)
	run := Run{RequestRate: 100, Seed: 3}
	reqs := idRequests(20, 4, 1)
	m, err := run.Execute(context.Background(), c, reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := run.Arrivals(len(reqs))
	for i, o := range m.Outputs {
		if !o.Success {
			t.Fatalf("request %d: %s", i, o.Error)
		}
		got := o.Start.Sub(m.Start)
		if got < want[i] || got > want[i]+500*time.Millisecond {
			t.Errorf("request %d sent at %v, arrival %v", i, got, want[i])
		}
	}
	if m.Duration < want[len(want)-1] {
		t.Errorf("duration %v before the last arrival %v", m.Duration, want[len(want)-1])
	}
}

// TestConcurrencyCap: the fake counts requests in flight; the cap is
// reached and never passed, and without a cap everything is in flight.
func TestConcurrencyCap(t *testing.T) {
	for _, tc := range []struct{ cap, n, want int }{{1, 5, 1}, {3, 12, 3}, {0, 8, 8}} {
		s := fakeserver.New(50*time.Millisecond, 5*time.Millisecond)
		m, err := Run{RequestRate: inf, MaxConcurrency: tc.cap}.Execute(context.Background(), newClient(s, CompletionsPath), idRequests(tc.n, 4, 3))
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := s.MaxInFlight(); got != tc.want {
			t.Errorf("cap %d, %d requests: server saw %d in flight, want %d", tc.cap, tc.n, got, tc.want)
		}
		r := Summarize(m, []float64{99})
		if r.Completed != tc.n || r.MaxConcurrentRequests > tc.want || r.MaxConcurrentRequests < 1 {
			t.Errorf("cap %d: completed %d, client-side peak %d", tc.cap, r.Completed, r.MaxConcurrentRequests)
		}
	}
}

// TestCancel: ending the context stops the run promptly, with the
// requests in flight failing rather than hanging.
func TestCancel(t *testing.T) {
	s := fakeserver.New(0, 0)
	defer s.Close()
	s.Faults = func(int) fakeserver.Fault { return fakeserver.SlowStart }
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	m, err := Run{RequestRate: 10, MaxConcurrency: 2}.Execute(ctx, newClient(s, CompletionsPath), idRequests(10, 4, 2))
	if err == nil || time.Since(t0) > 3*time.Second {
		t.Fatalf("cancelled run: err %v after %v", err, time.Since(t0))
	}
	for i, o := range m.Outputs {
		if o.Success {
			t.Fatalf("request %d succeeded in a cancelled run", i)
		}
	}
}
