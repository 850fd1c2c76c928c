package main

import (
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// fakeEPP answers ext_proc streams as llm-d's EPP v0.9.0 does in
// FULL_DUPLEX_STREAMED mode: after the whole request body, a headers
// response naming dest and the body back as streamed mutations; a headers
// response to the response headers; one streamed mutation per response body
// chunk. The knobs change that per test.
type fakeEPP struct {
	extproc.UnimplementedExternalProcessorServer
	dest         string
	reqBody      func([]byte) []byte // the request body it sends back (nil: unchanged)
	respChunk    func([]byte) []byte // each response chunk it sends back (nil: unchanged)
	continueResp bool                // answer response chunks with CONTINUE and no mutation
	immediate    *extproc.ImmediateResponse
	silent       bool // never answer the request phase
	skipResponse bool // close the stream cleanly after the request phase (the EPP's skip mode)
	failResponse bool // end the stream with an error at the first response body chunk

	frames chan *extproc.ProcessingRequest // every frame received, in order
	ended  chan error                      // each stream's end: io.EOF when the proxy closed it cleanly
}

// errEPPFailed is the error a failResponse EPP ends its stream with.
var errEPPFailed = status.Error(codes.Internal, "fake EPP failure")

func newFakeEPP() *fakeEPP {
	return &fakeEPP{frames: make(chan *extproc.ProcessingRequest, 1000), ended: make(chan error, 10)}
}

func streamed(b []byte, eos bool) *extproc.CommonResponse {
	return &extproc.CommonResponse{BodyMutation: &extproc.BodyMutation{Mutation: &extproc.BodyMutation_StreamedResponse{
		StreamedResponse: &extproc.StreamedBodyResponse{Body: b, EndOfStream: eos}}}}
}

func setHeader(k, v string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: k, RawValue: []byte(v)}}
}

func (f *fakeEPP) Process(srv extproc.ExternalProcessor_ProcessServer) error {
	var body []byte
	destResp := &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_RequestHeaders{RequestHeaders: &extproc.HeadersResponse{
		Response: &extproc.CommonResponse{ClearRouteCache: true, HeaderMutation: &extproc.HeaderMutation{
			SetHeaders: []*corev3.HeaderValueOption{setHeader(destHeader, f.dest), setHeader("x-picked", "yes")}}}}}}
	for {
		req, err := srv.Recv()
		if err != nil {
			f.ended <- err
			if err == io.EOF {
				return nil
			}
			return err
		}
		f.frames <- proto.Clone(req).(*extproc.ProcessingRequest)
		var resp []*extproc.ProcessingResponse
		switch v := req.Request.(type) {
		case *extproc.ProcessingRequest_RequestHeaders:
			if f.immediate != nil {
				resp = append(resp, &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ImmediateResponse{ImmediateResponse: f.immediate}})
			} else if v.RequestHeaders.EndOfStream && !f.silent {
				resp = append(resp, destResp)
			}
		case *extproc.ProcessingRequest_RequestBody:
			body = append(body, v.RequestBody.Body...)
			if !v.RequestBody.EndOfStream || f.silent {
				break
			}
			b := body
			if f.reqBody != nil {
				b = f.reqBody(b)
			}
			resp = append(resp, destResp, &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_RequestBody{
				RequestBody: &extproc.BodyResponse{Response: streamed(b, true)}}})
			if f.skipResponse {
				for _, r := range resp {
					if err := srv.Send(r); err != nil {
						return err
					}
				}
				f.ended <- io.EOF
				return nil
			}
		case *extproc.ProcessingRequest_ResponseHeaders:
			resp = append(resp, &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ResponseHeaders{ResponseHeaders: &extproc.HeadersResponse{
				Response: &extproc.CommonResponse{HeaderMutation: &extproc.HeaderMutation{SetHeaders: []*corev3.HeaderValueOption{setHeader("x-fake-epp", "seen")}}}}}})
		case *extproc.ProcessingRequest_ResponseBody:
			if f.failResponse {
				f.ended <- errEPPFailed
				return errEPPFailed
			}
			if f.continueResp {
				resp = append(resp, &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ResponseBody{ResponseBody: &extproc.BodyResponse{}}})
				break
			}
			b := v.ResponseBody.Body
			if f.respChunk != nil {
				b = f.respChunk(b)
			}
			resp = append(resp, &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ResponseBody{
				ResponseBody: &extproc.BodyResponse{Response: streamed(b, v.ResponseBody.EndOfStream)}}})
		case *extproc.ProcessingRequest_ResponseTrailers:
			resp = append(resp, &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ResponseTrailers{ResponseTrailers: &extproc.TrailersResponse{}}})
		}
		for _, r := range resp {
			if err := srv.Send(r); err != nil {
				return err
			}
		}
	}
}

// harness is a proxy in front of a fake EPP (gRPC on loopback) and a fake
// replica (upstream).
type harness struct {
	epp      *fakeEPP
	proxy    *Proxy
	url      string // the proxy's base URL
	upstream string // the replica's host:port
}

// newHarness starts the fake EPP and replica and the proxy; f.dest defaults
// to the replica.
func newHarness(t testing.TB, f *fakeEPP, replica http.HandlerFunc) *harness {
	t.Helper()
	up := httptest.NewServer(replica)
	t.Cleanup(up.Close)
	if f.dest == "" {
		f.dest = up.Listener.Addr().String()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	extproc.RegisterExternalProcessorServer(gs, f)
	go gs.Serve(l)
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	logger := log.New(io.Discard, "", 0)
	if testing.Verbose() {
		logger = log.New(os.Stderr, "proxy: ", log.Lmicroseconds)
	}
	p := &Proxy{EPP: extproc.NewExternalProcessorClient(cc), Upstream: NewTransport(), PickTimeout: 10 * time.Second,
		MaxBody: 16 << 20, Verbose: testing.Verbose(), Logf: logger.Printf}
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	return &harness{epp: f, proxy: p, url: ps.URL, upstream: up.Listener.Addr().String()}
}

// frames drains what the fake EPP received once its stream ended (waiting up
// to 10 s for the end), and returns the stream's end.
func (h *harness) frames(t *testing.T) ([]*extproc.ProcessingRequest, error) {
	t.Helper()
	var end error
	select {
	case end = <-h.epp.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the ext_proc stream did not end within 10 s")
	}
	var out []*extproc.ProcessingRequest
	for {
		select {
		case f := <-h.epp.frames:
			out = append(out, f)
		default:
			return out, end
		}
	}
}

// headerOf is the value of key in an ext_proc header map ("" if absent).
func headerOf(m *corev3.HeaderMap, key string) string {
	for _, h := range m.GetHeaders() {
		if h.GetKey() == key {
			return string(h.GetRawValue())
		}
	}
	return ""
}

// post sends a JSON body through the proxy.
func (h *harness) post(t *testing.T, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", h.url+"/v1/completions", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
