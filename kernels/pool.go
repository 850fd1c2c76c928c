package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"

	"kiln/kernels/simd"
)

// Task is one parallel operation: Run processes the items [lo, hi) of it on
// the worker numbered worker (0 <= worker < Pool.Threads()). A Task must
// write only to outputs owned by its items, so that the result does not
// depend on which worker ran which items; worker exists to index per-worker
// scratch.
//
// Pool.Run takes a Task interface rather than a closure so that a caller can
// keep the task in a preallocated struct and dispatch it with no allocation.
type Task interface {
	Run(worker, lo, hi int)
}

// Pool is a set of persistent worker goroutines that run Tasks as a
// parallel-for. The calling goroutine takes part as worker 0, so a Pool of
// n threads starts n-1 goroutines; a Pool of 1 runs everything inline.
//
// Items are handed out in chunks through an atomic counter (dynamic
// scheduling: a slow worker takes fewer chunks). Idle workers spin briefly
// for the next Run (ops of a forward pass follow each other within
// microseconds) and then park on a channel, so an idle Pool costs no CPU.
//
// Run calls are serialized: two goroutines may share a Pool, but their
// operations take turns. Run must not be called from inside a Task.
type Pool struct {
	threads int
	mu      sync.Mutex // one Run at a time

	// Current job, written by Run before gen is bumped, read by workers
	// after they observe the new gen (the atomic store/load orders them).
	task   Task
	n      int  // items
	chunk  int  // items per grab (guided: the smallest grab, and its multiple)
	guided bool // grabs shrink with the work left (runGuided)
	next   atomic.Int64
	gen    atomic.Uint64

	pending atomic.Int32  // workers (excluding the caller) not done with gen
	waiting atomic.Int32  // 1 while the caller is parked on done
	done    chan struct{} // wakes the parked caller

	workers []poolWorker
	closed  atomic.Bool
	exited  sync.WaitGroup

	// Background prefetch for worker 1 while it waits for the next job
	// (see Prefetch): the posted bytes (nil when none), how many of them,
	// and an epoch that CancelPrefetch bumps.
	pf      atomic.Pointer[[]byte]
	pfLimit atomic.Int64
	pfEpoch atomic.Uint64

	// Scratch owned by the Pool for the kernels it runs (see scratch.go).
	scratch scratch
}

type poolWorker struct {
	parked atomic.Int32  // 1 while parked on wake
	wake   chan struct{} // capacity 1
	// Worker 1's prefetch in progress: bytes left and the epoch it was
	// posted in (touched only by worker 1).
	pfData  []byte
	pfEpoch uint64
	_       [40]byte // keep workers' flags on separate cache lines
}

// prefetchChunk is the bytes a worker prefetches between checks for a new
// job (about 2 us of DRAM traffic).
const prefetchChunk = 32 << 10

// prefetch asks worker 1, if the pool has one, to pull the first limit
// bytes of *b into the caches while it waits for jobs: in a decode step the
// workers idle while the caller runs serial work (norms, RoPE,
// activations) and the memory bus idles with them, so the start of the
// next weight matrix can stream in meanwhile. The worker pauses for jobs
// and resumes after them, until it is done or cancelPrefetch. *b must not
// change (weights do not); it is only read by prefetch hints, so results
// do not change. A later prefetch replaces a pending one.
func (p *Pool) prefetch(b *[]byte, limit int) {
	if p.threads > 1 {
		p.pfLimit.Store(int64(limit))
		p.pf.Store(b)
	}
}

// cancelPrefetch ends the posted and the running prefetch.
func (p *Pool) cancelPrefetch() {
	if p.threads > 1 {
		p.pf.Store(nil)
		p.pfEpoch.Add(1)
	}
}

// Forget cancels the background prefetch and returns once no worker will
// read the memory it was given: call it before freeing weights that this
// pool may have been prefetching while the pool lives on (a model that
// shared another's pool, closing). A closed pool has nothing to forget.
func (p *Pool) Forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() || p.threads == 1 {
		return
	}
	p.cancelPrefetch()
	// An empty job every worker takes part in: worker 1 leaves its
	// prefetch for it (it checks for a job between chunks), and after it
	// sees the cancelled epoch before it touches the old bytes again.
	p.dispatch(2*p.threads, 1, false, noTask{})
}

// noTask does nothing (Forget's job).
type noTask struct{}

func (noTask) Run(worker, lo, hi int) {}

// spinIters bounds how long an idle worker (or the caller waiting for
// workers) polls before parking: about 20-50 µs on current CPUs.
const spinIters = 20000

// NewPool starts a pool of threads workers (the caller counts as one);
// threads <= 0 means runtime.NumCPU().
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	p := &Pool{threads: threads, done: make(chan struct{}, 1)}
	p.workers = make([]poolWorker, threads)
	for w := 1; w < threads; w++ {
		p.workers[w].wake = make(chan struct{}, 1)
		p.exited.Add(1)
		go p.loop(w)
	}
	return p
}

// Threads is the number of workers, the caller of Run included.
func (p *Pool) Threads() int { return p.threads }

// Close stops the worker goroutines and waits for them to exit. It is safe
// to call more than once. Run must not be called after Close.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Swap(true) {
		return
	}
	p.gen.Add(1) // workers see closed after observing the new gen
	for w := 1; w < p.threads; w++ {
		p.kick(w)
	}
	p.exited.Wait()
}

// Run calls t.Run over the items [0, n) split into chunks of about grain
// items (grain <= 0 picks one that gives each worker ~4 chunks), on all
// workers, and returns when every item is done. It allocates nothing.
func (p *Pool) Run(n, grain int, t Task) {
	p.lock()
	p.run(n, grain, t)
	p.mu.Unlock()
}

// lock takes the Pool for one operation (its scratch included).
func (p *Pool) lock() {
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		panic("kernels: Pool used after Close")
	}
}

// run is Run for a caller that holds p.mu.
func (p *Pool) run(n, grain int, t Task) {
	if n <= 0 {
		return
	}
	if grain <= 0 {
		grain = (n + 4*p.threads - 1) / (4 * p.threads)
	}
	p.dispatch(n, grain, false, t)
}

// runGuided is run with guided self-scheduling: each grab takes about
// 1/(2*threads) of the items still left, rounded up to a multiple of
// grain (and at least grain). Grabs start large, so each worker streams
// long contiguous ranges (memory-bound loops keep their prefetch streams),
// and end small, so workers finish together. The caller holds p.mu.
func (p *Pool) runGuided(n, grain int, t Task) {
	if n <= 0 {
		return
	}
	p.dispatch(n, max(1, grain), true, t)
}

func (p *Pool) dispatch(n, grain int, guided bool, t Task) {
	if p.threads == 1 || n <= grain {
		t.Run(0, 0, n)
		return
	}
	p.task, p.n, p.chunk, p.guided = t, n, grain, guided
	p.next.Store(0)
	p.pending.Store(int32(p.threads - 1))
	p.gen.Add(1)
	for w := 1; w < p.threads; w++ {
		p.kick(w)
	}
	p.work(0)
	p.waitWorkers()
	p.task = nil
}

// work grabs chunks of the current job until none is left.
func (p *Pool) work(worker int) {
	t, n, chunk := p.task, p.n, p.chunk
	if p.guided {
		div := int64(2 * p.threads)
		for {
			lo := p.next.Load()
			if lo >= int64(n) {
				return
			}
			size := (int64(n) - lo + div - 1) / div
			size = max(1, (size+int64(chunk)-1)/int64(chunk)) * int64(chunk)
			if p.next.CompareAndSwap(lo, lo+size) {
				t.Run(worker, int(lo), int(min(lo+size, int64(n))))
			}
		}
	}
	for {
		lo := int(p.next.Add(int64(chunk))) - chunk
		if lo >= n {
			return
		}
		t.Run(worker, lo, min(lo+chunk, n))
	}
}

// waitWorkers returns once every worker has finished the current job.
//
// Parking protocol: the caller raises waiting, re-checks pending, and parks
// on done; a worker that drops pending to 0 and wins waiting.Swap sends one
// token. A token may be stale (sent by the last worker of the previous job
// after the caller had already seen pending == 0 by spinning), so a wake is
// only a hint: the loop re-checks pending. Every Swap of waiting from 1 to
// 0 won by a worker is matched by exactly one receive here.
func (p *Pool) waitWorkers() {
	for i := 0; i < spinIters; i++ {
		if p.pending.Load() == 0 {
			return
		}
		if i&63 == 63 {
			runtime.Gosched()
		}
	}
	for {
		p.waiting.Store(1)
		if p.pending.Load() == 0 {
			if p.waiting.Swap(0) == 0 {
				<-p.done // a worker won the swap and sends: drain it
			}
			return
		}
		<-p.done
		if p.pending.Load() == 0 {
			return
		}
	}
}

// kick wakes worker w if it is parked.
func (p *Pool) kick(w int) {
	if p.workers[w].parked.Swap(0) == 1 {
		p.workers[w].wake <- struct{}{}
	}
}

// runPrefetch takes up a newly posted prefetch and works through the
// current one a chunk at a time, until it is done, cancelled, or a job is
// posted (it then returns the new gen and resumes later).
func (p *Pool) runPrefetch(me *poolWorker, seen uint64) uint64 {
	if b := p.pf.Swap(nil); b != nil {
		data := *b
		me.pfData = data[:min(len(data), int(p.pfLimit.Load()))]
		me.pfEpoch = p.pfEpoch.Load()
	}
	for len(me.pfData) > 0 {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if p.pfEpoch.Load() != me.pfEpoch {
			break
		}
		n := min(prefetchChunk, len(me.pfData))
		simd.Prefetch(me.pfData[:n])
		me.pfData = me.pfData[n:]
	}
	me.pfData = nil
	return seen
}

// loop is worker w's goroutine: wait for a new gen, work, report done.
func (p *Pool) loop(w int) {
	defer p.exited.Done()
	me := &p.workers[w]
	var seen uint64 // gen starts at 0: a job posted before this goroutine runs is not missed
	for {
		seen = p.waitGen(me, seen)
		if p.closed.Load() {
			return
		}
		p.work(w)
		if p.pending.Add(-1) == 0 && p.waiting.Swap(0) == 1 {
			p.done <- struct{}{}
		}
	}
}

// waitGen spins, then parks, until p.gen differs from seen; it returns the
// new gen. Worker 1 first works through a pending Prefetch, a chunk at a
// time, checking for a new job between chunks.
func (p *Pool) waitGen(me *poolWorker, seen uint64) uint64 {
	prefetcher := me == &p.workers[1]
	for i := 0; i < spinIters; i++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if prefetcher && (len(me.pfData) > 0 || p.pf.Load() != nil) {
			if g := p.runPrefetch(me, seen); g != seen {
				return g
			}
			i = 0 // spin afresh after the work
		}
		if i&63 == 63 {
			runtime.Gosched()
		}
	}
	for {
		me.parked.Store(1)
		if g := p.gen.Load(); g != seen {
			if me.parked.Swap(0) == 0 {
				<-me.wake // Run saw us parked and sent a token: drain it
			}
			return g
		}
		<-me.wake
		if g := p.gen.Load(); g != seen {
			return g
		}
	}
}
