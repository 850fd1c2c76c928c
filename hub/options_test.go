package hub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOptionsFromEnvironment(t *testing.T) {
	tokenDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(tokenDir, "token"), []byte("hf_fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                       string
		opts                       Options
		env                        map[string]string
		endpoint, token, home, rev string
	}{
		{name: "defaults", env: map[string]string{"HOME": "/h"},
			endpoint: "https://huggingface.co", home: "/h/.cache/kiln", rev: "main"},
		{name: "KILN_HF_ENDPOINT over HF_ENDPOINT", env: map[string]string{"HOME": "/h", "KILN_HF_ENDPOINT": "http://mirror.local:8080/", "HF_ENDPOINT": "https://hf-mirror.com"},
			endpoint: "http://mirror.local:8080", home: "/h/.cache/kiln", rev: "main"},
		{name: "HF_ENDPOINT", env: map[string]string{"HOME": "/h", "HF_ENDPOINT": "https://hf-mirror.com"},
			endpoint: "https://hf-mirror.com", home: "/h/.cache/kiln", rev: "main"},
		{name: "KILN_HOME over XDG_CACHE_HOME", env: map[string]string{"HOME": "/h", "KILN_HOME": "/k", "XDG_CACHE_HOME": "/x"},
			endpoint: "https://huggingface.co", home: "/k", rev: "main"},
		{name: "XDG_CACHE_HOME", env: map[string]string{"HOME": "/h", "XDG_CACHE_HOME": "/x"},
			endpoint: "https://huggingface.co", home: "/x/kiln", rev: "main"},
		{name: "HF_TOKEN", env: map[string]string{"HOME": "/h", "HF_TOKEN": " hf_env \n", "HF_HOME": tokenDir},
			endpoint: "https://huggingface.co", token: "hf_env", home: "/h/.cache/kiln", rev: "main"},
		{name: "token file of huggingface-cli login", env: map[string]string{"HOME": "/h", "HF_HOME": tokenDir},
			endpoint: "https://huggingface.co", token: "hf_fromfile", home: "/h/.cache/kiln", rev: "main"},
		{name: "NoToken", opts: Options{NoToken: true}, env: map[string]string{"HOME": "/h", "HF_TOKEN": "hf_env"},
			endpoint: "https://huggingface.co", home: "/h/.cache/kiln", rev: "main"},
		{name: "explicit fields win", opts: Options{Endpoint: "http://e", Token: "t", Home: "/o", Revision: "v1"},
			env:      map[string]string{"HOME": "/h", "HF_TOKEN": "hf_env", "KILN_HOME": "/k", "HF_ENDPOINT": "https://x"},
			endpoint: "http://e", token: "t", home: "/o", rev: "v1"},
	}
	for _, tt := range tests {
		o := tt.opts
		o.Getenv = func(k string) string { return tt.env[k] }
		c, err := New(o)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if c.Endpoint() != tt.endpoint || c.opts.Token != tt.token || c.Home() != tt.home || c.opts.Revision != tt.rev {
			t.Errorf("%s: endpoint %q token %q home %q revision %q; want %q %q %q %q", tt.name,
				c.Endpoint(), c.opts.Token, c.Home(), c.opts.Revision, tt.endpoint, tt.token, tt.home, tt.rev)
		}
	}
}

func TestOptionsInvalid(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		env  map[string]string
		err  string
	}{
		{opts: Options{Endpoint: "huggingface.co"}, err: "want an http:// or https:// URL"},
		{opts: Options{Endpoint: "ftp://x"}, err: "want an http:// or https:// URL"},
		{opts: Options{Endpoint: "https://x/?a=b"}, err: "no query"},
		{env: map[string]string{"HOME": "/h", "HF_ENDPOINT": "nonsense"}, err: "endpoint"},
		{opts: Options{Home: "/h", RetryWait: -1}, err: "negative"},
		{opts: Options{Home: "/h", Revision: "a\nb"}, err: "control characters"},
		{env: map[string]string{}, err: "set KILN_HOME"},
	} {
		o := tt.opts
		o.Getenv = func(k string) string { return tt.env[k] }
		_, err := New(o)
		if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "hub: ") {
			t.Errorf("New(%+v) with %v: %v, want an error with %q", tt.opts, tt.env, err, tt.err)
		}
	}
}
