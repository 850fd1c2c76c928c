package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// destHeader names the picked replica: the EPP sets it on the request (and in
// the envoy.lb dynamic metadata), and the proxy sets it on the response to the
// replica that served.
const destHeader = "x-gateway-destination-endpoint"

// hopHeaders are connection-level headers a proxy never forwards (RFC 9110
// 7.6.1); content-length is recomputed from the body actually sent.
var hopHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true, "proxy-authenticate": true,
	"proxy-authorization": true, "te": true, "trailer": true, "transfer-encoding": true, "upgrade": true,
	"content-length": true,
}

// headerValue is a mutation's value: raw_value when set (what Envoy and the
// EPP use), else value.
func headerValue(h *corev3.HeaderValue) string {
	if len(h.GetRawValue()) > 0 {
		return string(h.GetRawValue())
	}
	return h.GetValue()
}

// pseudo holds the pseudo-headers a mutation may change: the request's
// :method, :path and :authority, or the response's :status.
type pseudo map[string]string

// applyHeaderMutation applies m to h (and to the pseudo-headers in ps, which
// may be nil). As Envoy's ext_proc filter does, a set header overwrites unless
// append is true or append_action says otherwise; hop-by-hop headers and
// content-length are the proxy's own and are ignored; other pseudo-headers
// than those in ps are ignored.
func applyHeaderMutation(h http.Header, ps pseudo, m *extproc.HeaderMutation) {
	for _, o := range m.GetSetHeaders() {
		k := strings.ToLower(o.GetHeader().GetKey())
		v := headerValue(o.GetHeader())
		if k == "" || hopHeaders[k] || k == "host" {
			continue
		}
		if strings.HasPrefix(k, ":") {
			if _, ok := ps[k]; ok && v != "" {
				ps[k] = v
			}
			continue
		}
		_, exists := h[http.CanonicalHeaderKey(k)]
		switch {
		case o.GetAppend() != nil && o.GetAppend().GetValue():
			h.Add(k, v)
		case o.GetAppend() != nil:
			h.Set(k, v)
		case o.GetAppendAction() == corev3.HeaderValueOption_ADD_IF_ABSENT:
			if !exists {
				h.Set(k, v)
			}
		case o.GetAppendAction() == corev3.HeaderValueOption_OVERWRITE_IF_EXISTS:
			if exists {
				h.Set(k, v)
			}
		default: // ext_proc overwrites by default (append unset)
			h.Set(k, v)
		}
	}
	for _, k := range m.GetRemoveHeaders() {
		if k = strings.ToLower(k); !strings.HasPrefix(k, ":") && !hopHeaders[k] {
			h.Del(k)
		}
	}
}

// destination is the picked endpoint list of one processing response: the
// x-gateway-destination-endpoint header mutation, else the envoy.lb dynamic
// metadata; "" when it names none.
func destination(cr *extproc.CommonResponse, md *structpb.Struct) string {
	for _, o := range cr.GetHeaderMutation().GetSetHeaders() {
		if strings.EqualFold(o.GetHeader().GetKey(), destHeader) {
			return headerValue(o.GetHeader())
		}
	}
	lb := md.GetFields()["envoy.lb"].GetStructValue()
	return lb.GetFields()[destHeader].GetStringValue()
}

// parseDestinations splits a destination list ("10.0.0.1:8000,10.0.0.2:8000")
// into host:port entries, in order. Each entry must be a host and a numeric
// port; an empty list or a malformed entry is an error.
func parseDestinations(s string) ([]string, error) {
	var out []string
	for e := range strings.SplitSeq(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		host, port, err := net.SplitHostPort(e)
		if err != nil {
			return nil, fmt.Errorf("destination %q: %v", e, err)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("destination %q: bad port", e)
		}
		if host == "" || strings.ContainsAny(host, "/?#@ ") {
			return nil, fmt.Errorf("destination %q: bad host", e)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, errors.New("empty destination list")
	}
	return out, nil
}

// validStatus is code when it is an HTTP status a response can carry, else
// def.
func validStatus(code, def int) int {
	if code < 100 || code > 599 {
		return def
	}
	return code
}
