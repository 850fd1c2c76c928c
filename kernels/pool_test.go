package kernels

import (
	"sync"
	"sync/atomic"
	"testing"
)

// countTask counts how often each item is visited and checks worker ids.
type countTask struct {
	hits    []atomic.Int32
	threads int
	bad     atomic.Bool
}

func (c *countTask) Run(worker, lo, hi int) {
	if worker < 0 || worker >= c.threads || lo < 0 || hi > len(c.hits) || lo >= hi {
		c.bad.Store(true)
		return
	}
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

func TestPoolRunVisitsEachItemOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := NewPool(threads)
		if p.Threads() != threads {
			t.Fatalf("Threads() = %d, want %d", p.Threads(), threads)
		}
		for _, tc := range []struct{ n, grain int }{
			{0, 0}, {1, 0}, {7, 1}, {100, 0}, {100, 3}, {1000, 7}, {5, 100},
		} {
			for rep := 0; rep < 20; rep++ { // repeat: exercise spin and park paths
				c := &countTask{hits: make([]atomic.Int32, tc.n), threads: threads}
				p.Run(tc.n, tc.grain, c)
				if c.bad.Load() {
					t.Fatalf("threads=%d n=%d grain=%d: bad worker or range", threads, tc.n, tc.grain)
				}
				for i := range c.hits {
					if h := c.hits[i].Load(); h != 1 {
						t.Fatalf("threads=%d n=%d grain=%d: item %d run %d times", threads, tc.n, tc.grain, i, h)
					}
				}
			}
		}
		p.Close()
		p.Close() // idempotent
	}
}

// TestPoolGuidedVisitsEachItemOnce: guided grabs cover every item once,
// in multiples of grain except the last.
func TestPoolGuidedVisitsEachItemOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := NewPool(threads)
		for _, tc := range []struct{ n, grain int }{
			{0, 16}, {1, 16}, {7, 1}, {100, 16}, {2048, 16}, {11264, 16}, {1000, 7}, {5, 100},
		} {
			for rep := 0; rep < 20; rep++ {
				c := &countTask{hits: make([]atomic.Int32, tc.n), threads: threads}
				p.lock()
				p.runGuided(tc.n, tc.grain, c)
				p.mu.Unlock()
				if c.bad.Load() {
					t.Fatalf("threads=%d n=%d grain=%d: bad worker or range", threads, tc.n, tc.grain)
				}
				for i := range c.hits {
					if h := c.hits[i].Load(); h != 1 {
						t.Fatalf("threads=%d n=%d grain=%d: item %d run %d times", threads, tc.n, tc.grain, i, h)
					}
				}
			}
		}
		p.Close()
	}
}

func TestPoolDefaultThreads(t *testing.T) {
	p := NewPool(0)
	defer p.Close()
	if p.Threads() < 1 {
		t.Fatalf("NewPool(0).Threads() = %d", p.Threads())
	}
}

// TestPoolConcurrentCallers: Run from several goroutines at once is
// serialized, each call still complete.
func TestPoolConcurrentCallers(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	var wg sync.WaitGroup
	var failed atomic.Bool
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 50; rep++ {
				c := &countTask{hits: make([]atomic.Int32, 257), threads: 3}
				p.Run(257, 5, c)
				for i := range c.hits {
					if c.hits[i].Load() != 1 {
						failed.Store(true)
					}
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		t.Fatal("an item was skipped or repeated under concurrent Run")
	}
}

func TestPoolRunAfterClosePanics(t *testing.T) {
	p := NewPool(2)
	p.Close()
	mustPanic(t, "Run after Close", func() { p.Run(10, 1, &countTask{hits: make([]atomic.Int32, 10), threads: 2}) })
}

type nopTask struct{ sink []int }

func (n *nopTask) Run(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		n.sink[i]++
	}
}

func TestPoolRunAllocs(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	task := &nopTask{sink: make([]int, 64)}
	if a := testing.AllocsPerRun(100, func() { p.Run(64, 4, task) }); a != 0 {
		t.Fatalf("%v allocations per Run", a)
	}
}

func BenchmarkPoolRun(b *testing.B) {
	p := NewPool(0)
	defer p.Close()
	task := &nopTask{sink: make([]int, 64)}
	b.ReportAllocs()
	for b.Loop() {
		p.Run(64, 4, task)
	}
}

// TestPoolPrefetchInterleavesWithJobs: a long background prefetch pauses
// for jobs and resumes, and cancelling it leaves the pool working.
func TestPoolPrefetchInterleavesWithJobs(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	big := make([]byte, 64<<20)
	for rep := 0; rep < 50; rep++ {
		p.lock()
		p.prefetch(&big, len(big))
		p.mu.Unlock()
		c := &countTask{hits: make([]atomic.Int32, 1000), threads: 2}
		p.Run(1000, 7, c)
		if c.bad.Load() {
			t.Fatal("bad worker or range")
		}
		for i := range c.hits {
			if h := c.hits[i].Load(); h != 1 {
				t.Fatalf("rep %d: item %d run %d times", rep, i, h)
			}
		}
		if rep%2 == 0 {
			p.lock()
			p.cancelPrefetch()
			p.mu.Unlock()
		}
	}
}

// TestPoolForget: after Forget, worker 1 no longer reads what it was
// prefetching (the race detector sees the slice header rewritten with no
// conflicting read), the pool still works, and Forget after Close is a
// no-op.
func TestPoolForget(t *testing.T) {
	p := NewPool(3)
	for rep := 0; rep < 20; rep++ {
		big := make([]byte, 8<<20)
		p.lock()
		p.prefetch(&big, len(big))
		p.mu.Unlock()
		p.Forget()
		big = nil // what Unpack does to a matrix's panels
		c := &countTask{hits: make([]atomic.Int32, 100), threads: 3}
		p.Run(100, 3, c)
		if c.bad.Load() {
			t.Fatal("bad worker or range")
		}
	}
	p.Close()
	p.Forget()
}
