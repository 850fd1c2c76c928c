package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// requestChunk is the most request body one RequestBody frame carries.
const requestChunk = 64 << 10

// decision is the outcome of the request phase: what to send where, or an
// immediate response.
type decision struct {
	header    http.Header // the upstream request's headers, mutated by the EPP
	ps        pseudo      // :method, :path, :authority, mutated by the EPP
	body      []byte      // the upstream request's body
	dests     string      // x-gateway-destination-endpoint: one or more host:port, comma-separated
	immediate *extproc.ImmediateResponse
}

// pick runs the request phase: it sends the request headers and body to the
// EPP and applies what it answers, until the body phase is complete (a
// streamed body mutation with end_of_stream, or a body response without
// one), the EPP answers immediately, or PickTimeout passes.
func (x *exchange) pick() (*decision, error) {
	r := x.r
	h := r.Header.Clone()
	for k := range h {
		if hopHeaders[strings.ToLower(k)] {
			delete(h, k)
		}
	}
	x.reqID = h.Get("X-Request-Id")
	if x.reqID == "" {
		x.reqID = newRequestID()
		h.Set("X-Request-Id", x.reqID)
	}
	d := &decision{header: h, ps: pseudo{":method": r.Method, ":path": r.URL.RequestURI(), ":authority": r.Host}}
	hasBody := r.ContentLength != 0
	timer := time.NewTimer(x.p.PickTimeout)
	defer timer.Stop()
	if err := x.send(requestHeadersFrame(r, h, !hasBody)); err != nil {
		return nil, x.eppError(err)
	}
	var body []byte
	if hasBody {
		var err error
		if body, err = x.sendBody(); err != nil {
			return nil, err
		}
	}
	var streamed []byte
	for {
		resp, err := x.recv(timer.C)
		if err != nil {
			return nil, x.eppError(err)
		}
		switch v := resp.Response.(type) {
		case *extproc.ProcessingResponse_ImmediateResponse:
			d.immediate = v.ImmediateResponse
			return d, nil
		case *extproc.ProcessingResponse_RequestHeaders:
			cr := v.RequestHeaders.GetResponse()
			x.applyRequest(d, cr, resp)
			if cr.GetStatus() == extproc.CommonResponse_CONTINUE_AND_REPLACE {
				// The EPP replaces the body from the headers phase and skips the body phase.
				d.body = cr.GetBodyMutation().GetBody()
				return d, nil
			}
			if !hasBody {
				return d, nil
			}
		case *extproc.ProcessingResponse_RequestBody:
			cr := v.RequestBody.GetResponse()
			x.applyRequest(d, cr, resp)
			switch m := cr.GetBodyMutation().GetMutation().(type) {
			case *extproc.BodyMutation_StreamedResponse:
				streamed = append(streamed, m.StreamedResponse.GetBody()...)
				if m.StreamedResponse.GetEndOfStream() {
					d.body = streamed
					return d, nil
				}
			case *extproc.BodyMutation_Body:
				d.body = m.Body
				return d, nil
			case *extproc.BodyMutation_ClearBody:
				return d, nil
			default: // CONTINUE without mutation: the original body
				d.body = body
				return d, nil
			}
		case *extproc.ProcessingResponse_RequestTrailers:
			// The proxy sends no request trailers; nothing to apply.
		default:
			return nil, &httpError{http.StatusBadGateway, fmt.Sprintf("EPP answered %T during the request phase", v)}
		}
	}
}

// sendBody streams the client's request body to the EPP in frames of up to
// requestChunk bytes, end_of_stream on the last, and returns it whole (for a
// CONTINUE without body mutation). Over MaxBody it is a 413.
func (x *exchange) sendBody() ([]byte, error) {
	r := x.r
	var body []byte
	buf := make([]byte, requestChunk)
	lr := io.LimitReader(r.Body, x.p.MaxBody+1)
	eosSent := false
	for {
		n, err := lr.Read(buf)
		if n > 0 {
			body = append(body, buf[:n]...)
			if int64(len(body)) > x.p.MaxBody {
				return nil, &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", x.p.MaxBody)}
			}
			eos := r.ContentLength > 0 && int64(len(body)) == r.ContentLength
			if err := x.send(requestBodyFrame(bytes.Clone(buf[:n]), eos)); err != nil {
				return nil, x.eppError(err)
			}
			eosSent = eos
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if x.r.Context().Err() != nil {
				return nil, errClientGone
			}
			return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("reading the request body: %v", err)}
		}
	}
	if !eosSent {
		if err := x.send(requestBodyFrame(nil, true)); err != nil {
			return nil, x.eppError(err)
		}
	}
	return body, nil
}

// applyRequest applies one request-phase response's header mutation and
// takes its destination, if it names one.
func (x *exchange) applyRequest(d *decision, cr *extproc.CommonResponse, resp *extproc.ProcessingResponse) {
	applyHeaderMutation(d.header, d.ps, cr.GetHeaderMutation())
	if dst := destination(cr, resp.GetDynamicMetadata()); dst != "" {
		d.dests = dst
	}
}

// eppError maps a failure talking to the EPP to what the client gets.
func (x *exchange) eppError(err error) error {
	switch {
	case errors.Is(err, errPickTimeout):
		return &httpError{http.StatusGatewayTimeout, fmt.Sprintf("the EPP did not pick within %v", x.p.PickTimeout)}
	case errors.Is(err, errClientGone) || x.r.Context().Err() != nil:
		return errClientGone
	case errors.Is(err, io.EOF):
		// A failed Send reports io.EOF; the stream's status comes from Recv.
		if _, rerr := x.recv(nil); rerr != nil && !errors.Is(rerr, io.EOF) {
			return &httpError{http.StatusBadGateway, fmt.Sprintf("EPP: %v", rerr)}
		}
		return &httpError{http.StatusBadGateway, "the EPP closed the stream before picking"}
	}
	return &httpError{http.StatusBadGateway, fmt.Sprintf("EPP: %v", err)}
}
