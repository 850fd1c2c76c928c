package main

import (
	"context"
	"sync"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// received is one result of the stream's Recv: a response, or the error
// that ended the stream (io.EOF when the EPP closed it cleanly).
type received struct {
	resp *extproc.ProcessingResponse
	err  error
}

// inbox receives an ext_proc stream's responses on its own goroutine into an
// unbounded queue, so that the EPP is never blocked sending while the proxy is
// blocked sending to it (full duplex: each side may send any number of frames
// before reading). It holds at most what the EPP sent, which is bounded by
// what the proxy sent it.
type inbox struct {
	mu    sync.Mutex
	queue []received
	ready chan struct{} // has a value while queue is non-empty (capacity 1)
}

// startInbox runs Recv on recv until it fails, queueing each result.
func startInbox(ctx context.Context, recv func() (*extproc.ProcessingResponse, error)) *inbox {
	in := &inbox{ready: make(chan struct{}, 1)}
	go func() {
		for {
			resp, err := recv()
			in.mu.Lock()
			in.queue = append(in.queue, received{resp, err})
			in.mu.Unlock()
			select {
			case in.ready <- struct{}{}:
			default:
			}
			if err != nil || ctx.Err() != nil {
				return
			}
		}
	}()
	return in
}

// next pops the oldest result without waiting; ok is false when none is
// queued (wait on in.ready, then call next again).
func (in *inbox) next() (r received, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.queue) == 0 {
		return received{}, false
	}
	r = in.queue[0]
	in.queue[0] = received{}
	in.queue = in.queue[1:]
	if len(in.queue) > 0 {
		select {
		case in.ready <- struct{}{}:
		default:
		}
	}
	return r, true
}
