// Command kiln-extproc-proxy is a test tool: a small HTTP proxy that stands in
// for Envoy in front of llm-d's endpoint picker (EPP), so that deploy/local
// can run kiln replicas behind the picker without Kubernetes. Production uses
// Envoy or a Gateway implementation; this proxy is not built for that (HTTP/1.1
// only, no TLS, no retries beyond the connect fallback, no health checks).
//
// It behaves as Envoy does with the processing mode the Gateway API Inference
// Extension configures: request and response headers SEND, request and
// response bodies FULL_DUPLEX_STREAMED, trailers SEND. For each HTTP request it
// holds one ext_proc stream open for the request's whole life:
//
//  1. request headers (:method, :path, :authority, :scheme, x-request-id,
//     generated when absent, and the client's headers), then the request body
//     in chunks of up to 64 KiB, end_of_stream on the last;
//  2. it applies the picker's header and body mutations and forwards the
//     request to the destination it names in x-gateway-destination-endpoint
//     (or the envoy.lb dynamic metadata): a comma-separated list is tried in
//     order while connecting fails, as Envoy's original-destination fallback
//     does. An immediate response goes back to the client verbatim;
//  3. the response headers (:status and the replica's headers) and then each
//     response body chunk as it arrives go to the picker, and what it answers
//     for each (its streamed body mutation, or the original chunk for a
//     CONTINUE without one) is written to the client and flushed at once, so
//     an SSE stream reaches the client token by token.
//
// The response names the replica that served in x-gateway-destination-endpoint.
// A client that goes away cancels the upstream request and the ext_proc
// stream; an upstream that fails mid-stream truncates the client's response
// (the connection is aborted, so a chunked stream does not look complete) and
// cancels the ext_proc stream. Limits: 10 s for the pick, 16 MiB of request
// body (413 above it).
//
//	kiln-extproc-proxy -epp 127.0.0.1:19002 -listen 127.0.0.1:18080 [-v]
package main
