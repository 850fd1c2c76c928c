package main

import (
	"net"
	"net/http"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestParseDestinations(t *testing.T) {
	got, err := parseDestinations(" 10.0.0.1:8000, 10.0.0.2:8001,")
	if err != nil || strings.Join(got, "|") != "10.0.0.1:8000|10.0.0.2:8001" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, bad := range []string{"", ",", "10.0.0.1", "10.0.0.1:0", "10.0.0.1:http", ":80", "a/b:80", "[::1]:99999"} {
		if _, err := parseDestinations(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// FuzzParseDestinations: never panics, and every entry it returns is one
// host:port without a comma.
func FuzzParseDestinations(f *testing.F) {
	for _, s := range []string{"10.0.0.1:8000", "a:1,b:2", "[::1]:80, x:9", ",,", "::::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseDestinations(s)
		if err != nil {
			return
		}
		if len(got) == 0 {
			t.Fatal("no error and no destination")
		}
		for _, d := range got {
			if _, _, err := net.SplitHostPort(d); err != nil || strings.Contains(d, ",") {
				t.Fatalf("entry %q of %q", d, s)
			}
		}
	})
}

func TestApplyHeaderMutation(t *testing.T) {
	h := http.Header{"X-Keep": {"1"}, "X-Drop": {"1"}, "X-Old": {"1"}}
	ps := pseudo{":path": "/a"}
	opt := func(k, v string) *corev3.HeaderValueOption {
		return &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: k, RawValue: []byte(v)}}
	}
	add := opt("x-keep", "2")
	add.Append = wrapperspb.Bool(true)
	absent := opt("x-old", "2")
	absent.AppendAction = corev3.HeaderValueOption_ADD_IF_ABSENT
	applyHeaderMutation(h, ps, &extproc.HeaderMutation{
		SetHeaders:    []*corev3.HeaderValueOption{add, absent, opt("x-new", "3"), opt(":path", "/b"), opt(":method", "PUT"), opt("content-length", "9"), opt("Connection", "close")},
		RemoveHeaders: []string{"x-drop"},
	})
	if strings.Join(h.Values("X-Keep"), ",") != "1,2" || h.Get("X-Old") != "1" || h.Get("X-New") != "3" || h.Get("X-Drop") != "" ||
		h.Get("Content-Length") != "" || h.Get("Connection") != "" || ps[":path"] != "/b" || ps[":method"] != "" {
		t.Errorf("headers %v, pseudo %v", h, ps)
	}
}
