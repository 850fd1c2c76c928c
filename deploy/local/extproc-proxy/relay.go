package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// responseChunk is the most upstream body one read (and so one ResponseBody
// frame) carries; a streamed response gives a read per chunk it flushes.
const responseChunk = 32 << 10

// chunk is one read of the upstream body: data, or the error that ended it
// (io.EOF at a clean end).
type chunk struct {
	data []byte
	err  error
	eos  bool // the frame sent for it carried end_of_stream (or was the trailers)
}

// pump reads body as the replica writes it and hands each read on, so that
// each chunk reaches the EPP (and the client) as soon as it arrives.
func pump(ctx context.Context, body io.Reader, out chan<- chunk) {
	buf := make([]byte, responseChunk)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			select {
			case out <- chunk{data: bytes.Clone(buf[:n])}:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			select {
			case out <- chunk{err: err}:
			case <-ctx.Done():
			}
			return
		}
	}
}

// relay runs the response phase: the replica's headers and each body chunk
// go to the EPP as they arrive, and what it answers goes to the client,
// flushed at once. If the EPP closes the stream cleanly (as it does when it
// skips response processing), the rest passes through unprocessed.
func (x *exchange) relay(resp *http.Response, dest string) {
	x.dest = dest
	w, rc := x.w, http.NewResponseController(x.w)
	hdr := resp.Header.Clone()
	for k := range hdr {
		if hopHeaders[strings.ToLower(k)] {
			delete(hdr, k)
		}
	}
	status := resp.StatusCode
	writeHeaders := func() {
		for k, v := range hdr {
			w.Header()[k] = v
		}
		w.Header().Set(destHeader, dest)
		w.WriteHeader(status)
		x.status = status
		rc.Flush()
	}
	// write sends b to the client at once; false when the client is gone.
	write := func(b []byte) bool {
		if x.status == 0 {
			writeHeaders()
		}
		if len(b) == 0 {
			return true
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	var trailers http.Header
	finish := func() {
		if x.status == 0 {
			writeHeaders()
		}
		for k, v := range trailers {
			w.Header()[http.TrailerPrefix+k] = v
		}
	}

	chunks := make(chan chunk)
	go pump(x.ctx, resp.Body, chunks)

	eppOpen := true     // frames still go to the EPP and its answers to the client
	sendClosed := false // a Send failed with io.EOF: the stream's end is in the inbox
	mutated := false    // the EPP streams body mutations: originals are no longer kept
	upDone := false     // the upstream body ended cleanly
	var pending []chunk // sent to the EPP, not yet answered (for CONTINUE and passthrough)
	sendFrame := func(f *extproc.ProcessingRequest) error {
		if sendClosed {
			return nil
		}
		err := x.send(f)
		if errors.Is(err, io.EOF) {
			sendClosed = true
			return nil
		}
		return err
	}
	if err := sendFrame(responseHeadersFrame(status, resp.Header)); err != nil {
		x.fail(&httpError{http.StatusBadGateway, fmt.Sprintf("EPP: %v", err)})
		return
	}
	for {
		if !eppOpen && upDone {
			finish()
			return
		}
		var chunkC <-chan chunk
		if !upDone {
			chunkC = chunks
		}
		var readyC <-chan struct{}
		if eppOpen {
			readyC = x.in.ready
		}
		select {
		case c := <-chunkC:
			switch {
			case c.err == io.EOF:
				upDone = true
				if !eppOpen {
					continue
				}
				end := chunk{eos: true}
				var err error
				if len(resp.Trailer) > 0 {
					trailers = resp.Trailer.Clone()
					err = sendFrame(responseTrailersFrame(trailers))
				} else {
					err = sendFrame(responseBodyFrame(nil, true))
				}
				if err == nil && !sendClosed {
					err = x.stream.CloseSend()
				}
				if err != nil {
					x.fail(&httpError{http.StatusBadGateway, fmt.Sprintf("EPP: %v", err)})
					return
				}
				pending = append(pending, end)
			case c.err != nil:
				// Cancelling the stream's context resets it: the EPP sees the
				// stream end with an error (CANCELLED), as when Envoy resets it.
				x.cancel()
				x.note = fmt.Sprintf("upstream failed mid-response: %v", c.err)
				if x.status == 0 {
					x.status = http.StatusBadGateway
					http.Error(w, "kiln-extproc-proxy: "+x.note, http.StatusBadGateway)
				} else {
					x.abort()
				}
				return
			case !eppOpen:
				if !write(c.data) {
					x.note = errClientGone.Error()
					return
				}
			default:
				if err := sendFrame(responseBodyFrame(c.data, false)); err != nil {
					x.fail(&httpError{http.StatusBadGateway, fmt.Sprintf("EPP: %v", err)})
					return
				}
				if !mutated {
					pending = append(pending, c)
				}
			}
		case <-readyC:
			for {
				r, ok := x.in.next()
				if !ok {
					break
				}
				if r.err != nil {
					if errors.Is(r.err, io.EOF) {
						// Processing skipped: what the EPP did not answer passes through.
						eppOpen = false
						if !mutated {
							for _, c := range pending {
								if !write(c.data) {
									x.note = errClientGone.Error()
									return
								}
							}
						}
						pending = nil
						break
					}
					if x.r.Context().Err() != nil {
						x.note = errClientGone.Error()
						return
					}
					x.fail(&httpError{http.StatusBadGateway, fmt.Sprintf("EPP: %v", r.err)})
					return
				}
				x.vlog("<-", r.resp)
				done, ok := x.answer(r.resp, &status, hdr, &trailers, &pending, &mutated, writeHeaders, write)
				if !ok {
					return
				}
				if done {
					finish()
					return
				}
			}
		case <-x.ctx.Done():
			x.note = errClientGone.Error()
			return
		}
	}
}

// answer applies one response-phase answer of the EPP. done: the response
// is complete; ok false: the exchange ended (client gone, or it was failed).
func (x *exchange) answer(resp *extproc.ProcessingResponse, status *int, hdr http.Header, trailers *http.Header,
	pending *[]chunk, mutated *bool, writeHeaders func(), write func([]byte) bool) (done, ok bool) {
	pop := func() chunk {
		if len(*pending) == 0 {
			return chunk{}
		}
		c := (*pending)[0]
		*pending = (*pending)[1:]
		return c
	}
	gone := func() (bool, bool) { x.note = errClientGone.Error(); return false, false }
	switch v := resp.Response.(type) {
	case *extproc.ProcessingResponse_ResponseHeaders:
		ps := pseudo{":status": strconv.Itoa(*status)}
		applyHeaderMutation(hdr, ps, v.ResponseHeaders.GetResponse().GetHeaderMutation())
		n, _ := strconv.Atoi(ps[":status"])
		*status = validStatus(n, *status)
		if x.status == 0 {
			writeHeaders()
		}
	case *extproc.ProcessingResponse_ResponseBody:
		cr := v.ResponseBody.GetResponse()
		switch m := cr.GetBodyMutation().GetMutation().(type) {
		case *extproc.BodyMutation_StreamedResponse:
			*mutated, *pending = true, nil
			if !write(m.StreamedResponse.GetBody()) {
				return gone()
			}
			return m.StreamedResponse.GetEndOfStream(), true
		case *extproc.BodyMutation_Body:
			c := pop()
			if !write(m.Body) {
				return gone()
			}
			return c.eos, true
		case *extproc.BodyMutation_ClearBody:
			c := pop()
			if !write(nil) {
				return gone()
			}
			return c.eos, true
		default: // CONTINUE without mutation: the original chunk
			c := pop()
			if !write(c.data) {
				return gone()
			}
			return c.eos, true
		}
	case *extproc.ProcessingResponse_ResponseTrailers:
		if *trailers != nil {
			applyHeaderMutation(*trailers, nil, v.ResponseTrailers.GetHeaderMutation())
		}
		return true, true
	case *extproc.ProcessingResponse_ImmediateResponse:
		if x.status == 0 {
			x.writeImmediate(v.ImmediateResponse)
			return false, false
		}
		x.cancel()
		x.note = "immediate response after the response started"
		x.abort()
		return false, false
	default:
		// A late request-phase answer: nothing left to apply.
	}
	return false, true
}
