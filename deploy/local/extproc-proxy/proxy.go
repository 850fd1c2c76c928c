package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Proxy is the HTTP handler: one ext_proc stream to the EPP per request.
type Proxy struct {
	EPP         extproc.ExternalProcessorClient
	Upstream    http.RoundTripper // to the replicas; no redirects, no environment proxy
	PickTimeout time.Duration     // from the stream's start to the EPP's destination or immediate response
	MaxBody     int64             // request body limit in bytes (413 above it)
	Verbose     bool              // log every ext_proc frame
	Logf        func(format string, args ...any)
}

// NewTransport is the upstream transport: plain HTTP/1.1 to the replicas,
// connect timeout 5 s (then the next destination is tried), no response
// timeout (a long prefill or stream is normal), no environment proxy, bodies
// passed through undecoded.
func NewTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&netDialer).DialContext,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// httpError is a failure answered to the client with Code.
type httpError struct {
	Code int
	Msg  string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Msg) }

// errClientGone: the client went away (its request context ended).
var errClientGone = errors.New("client went away")

// exchange is one request's state.
type exchange struct {
	p      *Proxy
	w      http.ResponseWriter
	r      *http.Request
	ctx    context.Context // the request's life: client disconnect or return cancels it
	cancel context.CancelFunc
	stream extproc.ExternalProcessor_ProcessClient
	in     *inbox
	reqID  string
	dest   string // the replica that served ("-" before one is picked)
	status int    // what the client got (0: nothing written)
	note   string // why it failed, for the log line
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{p: p, w: w, r: r, dest: "-"}
	start := time.Now()
	defer func() {
		if x.note != "" {
			x.note = " (" + x.note + ")"
		}
		p.Logf("%s %s -> %s %d %s%s", r.Method, r.URL.RequestURI(), x.dest, x.status, time.Since(start).Round(time.Microsecond), x.note)
	}()
	x.ctx, x.cancel = context.WithCancel(r.Context())
	defer x.cancel()
	stream, err := p.EPP.Process(x.ctx)
	if err != nil {
		x.fail(&httpError{http.StatusBadGateway, fmt.Sprintf("ext_proc stream: %v", err)})
		return
	}
	x.stream = stream
	x.in = startInbox(x.ctx, stream.Recv)
	d, err := x.pick()
	if err != nil {
		x.fail(err)
		return
	}
	if d.immediate != nil {
		x.writeImmediate(d.immediate)
		return
	}
	resp, dest, err := x.forward(d)
	if err != nil {
		x.fail(err)
		return
	}
	defer resp.Body.Close()
	x.relay(resp, dest)
}

// fail answers err to the client (when nothing was written yet) and ends
// the ext_proc stream.
func (x *exchange) fail(err error) {
	x.cancel()
	x.note = err.Error()
	if errors.Is(err, errClientGone) || x.r.Context().Err() != nil {
		x.note = errClientGone.Error()
		return
	}
	var he *httpError
	if !errors.As(err, &he) {
		he = &httpError{http.StatusBadGateway, err.Error()}
	}
	if x.status != 0 {
		x.abort()
		return
	}
	x.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	x.w.Header().Set("X-Content-Type-Options", "nosniff")
	x.w.WriteHeader(he.Code)
	x.status = he.Code
	io.WriteString(x.w, "kiln-extproc-proxy: "+he.Msg+"\n")
}

// abort ends a response already under way so that the client sees it
// truncated (a connection closed mid-body), never a clean end.
func (x *exchange) abort() {
	if conn, _, err := http.NewResponseController(x.w).Hijack(); err == nil {
		conn.Close()
		return
	}
	panic(http.ErrAbortHandler) // net/http's own way to abort a response (HTTP/2)
}

// writeImmediate answers the EPP's immediate response verbatim: status
// (200 when absent), headers, body.
func (x *exchange) writeImmediate(ir *extproc.ImmediateResponse) {
	x.cancel()
	applyHeaderMutation(x.w.Header(), nil, ir.GetHeaders())
	st := http.StatusOK
	if ir.GetStatus() != nil {
		st = validStatus(int(ir.GetStatus().GetCode()), http.StatusInternalServerError)
	}
	x.w.WriteHeader(st)
	x.status = st
	x.note = "immediate response"
	x.w.Write(ir.GetBody())
}

// send sends one frame to the EPP.
func (x *exchange) send(f *extproc.ProcessingRequest) error {
	x.vlog("->", f)
	return x.stream.Send(f)
}

// errPickTimeout: the EPP named no destination within PickTimeout.
var errPickTimeout = errors.New("pick timeout")

// recv waits for the EPP's next response; timeout (may be nil) bounds the
// wait. io.EOF: the EPP closed the stream cleanly.
func (x *exchange) recv(timeout <-chan time.Time) (*extproc.ProcessingResponse, error) {
	for {
		if r, ok := x.in.next(); ok {
			if r.err == nil {
				x.vlog("<-", r.resp)
			}
			return r.resp, r.err
		}
		select {
		case <-x.in.ready:
		case <-timeout:
			return nil, errPickTimeout
		case <-x.ctx.Done():
			return nil, errClientGone
		}
	}
}

func (x *exchange) vlog(dir string, m proto.Message) {
	if x.p.Verbose {
		b, _ := protojson.Marshal(m)
		x.p.Logf("%s ext_proc %s %s", x.reqID, dir, b)
	}
}

// newRequestID is a random UUID (version 4), as Envoy generates for
// x-request-id.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
