package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"kiln/hub/hubtest"
)

const repoID = "kiln-test/tiny-GGUF"

var (
	bigFile   = blob(300_000, 1) // LFS, through the CDN
	smallFile = blob(5_000, 2)   // plain git file, straight from the hub
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// standardRepo is a GGUF repository as they are published: several
// quantizations, a projector, a split model, a README.
func standardRepo(s *hubtest.Server) {
	s.AddFile(repoID, "README.md", []byte("# tiny\n"), false)
	s.AddFile(repoID, "tiny-Q4_K_M.gguf", bigFile, true)
	s.AddFile(repoID, "tiny-Q8_0.gguf", blob(200_000, 3), true)
	s.AddFile(repoID, "tiny-Q4_K_S.gguf", blob(100_000, 4), true)
	s.AddFile(repoID, "mmproj-tiny-Q4_K_M.gguf", blob(1_000, 5), true)
	s.AddFile(repoID, "small.gguf", smallFile, false)
	s.AddFile(repoID, "BF16/tiny-BF16-00001-of-00002.gguf", blob(1_000, 6), true)
	s.AddFile(repoID, "BF16/tiny-BF16-00002-of-00002.gguf", blob(1_000, 7), true)
}

func TestResolveDownloads(t *testing.T) {
	const token = "hf_granted"
	withToken := func(o *Options) { o.NoToken, o.Token = false, token }
	isCDN := func(r hubtest.Request) bool { return r.Server == "cdn" }
	cdnGET := func(r hubtest.Request) bool { return r.Server == "cdn" && r.Method == "GET" }
	tests := []struct {
		name     string
		setup    func(s *hubtest.Server)
		opts     func(o *Options)
		ref      string
		want     []byte // the file's content on success
		verified bool   // the hub published the sha256
		check    func(t *testing.T, reqs []hubtest.Request)
	}{
		{
			name: "LFS file through the CDN, token only to the hub",
			opts: withToken, setup: func(s *hubtest.Server) { s.AddToken(token) },
			ref: "hf:" + repoID + "/tiny-Q4_K_M.gguf", want: bigFile, verified: true,
			check: func(t *testing.T, reqs []hubtest.Request) {
				if n := count(reqs, func(r hubtest.Request) bool { return r.Server == "cdn" && r.Auth != "" }); n != 0 {
					t.Errorf("%d CDN requests carried the token", n)
				}
				if n := count(reqs, func(r hubtest.Request) bool { return r.Server == "hub" && r.Auth != "Bearer "+token }); n != 0 {
					t.Errorf("%d hub requests without the token", n)
				}
				if n := count(reqs, cdnGET); n != 1 {
					t.Errorf("%d CDN GETs, want 1", n)
				}
			},
		},
		{
			name: "small file straight from the hub",
			ref:  "hf:" + repoID + "/small.gguf", want: smallFile, verified: false,
			check: func(t *testing.T, reqs []hubtest.Request) {
				if n := count(reqs, isCDN); n != 0 {
					t.Errorf("%d CDN requests for a non-LFS file", n)
				}
			},
		},
		{
			name: "file in a subdirectory",
			ref:  "hf:" + repoID + "/BF16/tiny-BF16-00002-of-00002.gguf", want: blob(1_000, 7), verified: true,
		},
		{
			name: "hf:// spelling",
			ref:  "hf://" + repoID + "/small.gguf", want: smallFile,
		},
		{
			name: "renamed repository: same-host redirect keeps the token",
			opts: withToken,
			setup: func(s *hubtest.Server) {
				s.AddToken(token)
				s.Rename(repoID, "kiln-test/renamed-GGUF")
			},
			ref: "hf:" + repoID + "/tiny-Q4_K_M.gguf", want: bigFile, verified: true,
			check: func(t *testing.T, reqs []hubtest.Request) {
				if n := count(reqs, func(r hubtest.Request) bool {
					return r.Server == "hub" && strings.HasPrefix(r.Path, "/kiln-test/renamed-GGUF/") && r.Auth == "Bearer "+token
				}); n == 0 {
					t.Error("no request reached the new name with the token")
				}
			},
		},
		{
			name:  "quantization tag, case-insensitive, listing in pages",
			setup: func(s *hubtest.Server) { s.SetFaults(hubtest.Faults{PageSize: 2}) },
			ref:   "hf:" + repoID + ":q8_0", want: blob(200_000, 3), verified: true,
			check: func(t *testing.T, reqs []hubtest.Request) {
				if n := count(reqs, func(r hubtest.Request) bool { return strings.HasPrefix(r.Path, "/api/models/") }); n < 4 {
					t.Errorf("%d listing requests: the pages were not followed", n)
				}
			},
		},
		{
			name: "no tag: Q4_K_M by default",
			ref:  "hf:" + repoID, want: bigFile, verified: true,
		},
		{
			name:  "gated repository with a granted token",
			setup: func(s *hubtest.Server) { s.SetGated(repoID, token) },
			opts:  withToken,
			ref:   "hf:" + repoID + ":Q4_K_S", want: blob(100_000, 4), verified: true,
		},
		{
			name:  "connection dropped mid-body twice: resumed with Range",
			setup: func(s *hubtest.Server) { s.SetFaults(hubtest.Faults{DropAfter: 100_000, DropCount: 2}) },
			ref:   "hf:" + repoID + "/tiny-Q4_K_M.gguf", want: bigFile, verified: true,
			check: func(t *testing.T, reqs []hubtest.Request) {
				for _, rg := range []string{"", "bytes=100000-", "bytes=200000-"} {
					if count(reqs, func(r hubtest.Request) bool { return r.Server == "cdn" && r.Range == rg }) != 1 {
						t.Errorf("no single CDN request with Range %q", rg)
					}
				}
			},
		},
		{
			name: "connection dropped, then Range ignored: starts over cleanly",
			setup: func(s *hubtest.Server) {
				s.SetFaults(hubtest.Faults{DropAfter: 100_000, DropCount: 1, IgnoreRange: true})
			},
			ref: "hf:" + repoID + "/tiny-Q4_K_M.gguf", want: bigFile, verified: true,
			check: func(t *testing.T, reqs []hubtest.Request) {
				if count(reqs, func(r hubtest.Request) bool { return r.Server == "cdn" && r.Range == "bytes=100000-" }) != 1 {
					t.Error("the second attempt did not ask for a range")
				}
			},
		},
		{
			name: "small file dropped mid-body: the hub's own Range",
			setup: func(s *hubtest.Server) {
				s.SetFaults(hubtest.Faults{DropAfter: 1000, DropCount: 1})
			},
			ref: "hf:" + repoID + "/small.gguf", want: smallFile,
			check: func(t *testing.T, reqs []hubtest.Request) {
				if count(reqs, func(r hubtest.Request) bool { return r.Server == "hub" && r.Range == "bytes=1000-" }) != 1 {
					t.Error("no resumed request to the hub")
				}
			},
		},
		{
			name: "stalled body: aborted after StallTimeout and resumed",
			setup: func(s *hubtest.Server) {
				s.SetFaults(hubtest.Faults{StallAfter: 50_000, StallCount: 1})
			},
			opts: func(o *Options) { o.StallTimeout = 200 * time.Millisecond },
			ref:  "hf:" + repoID + "/tiny-Q4_K_M.gguf", want: bigFile, verified: true,
			check: func(t *testing.T, reqs []hubtest.Request) {
				if count(reqs, func(r hubtest.Request) bool { return r.Server == "cdn" && r.Range == "bytes=50000-" }) != 1 {
					t.Error("the stalled download was not resumed at 50000")
				}
			},
		},
		{
			name:  "LFS file redirected on the same host: sha256 from the first hop, token kept",
			opts:  withToken,
			setup: func(s *hubtest.Server) { s.AddToken(token); s.SetFaults(hubtest.Faults{SameHostCDN: true}) },
			ref:   "hf:" + repoID + "/tiny-Q4_K_M.gguf", want: bigFile, verified: true,
			check: func(t *testing.T, reqs []hubtest.Request) {
				if count(reqs, func(r hubtest.Request) bool {
					return strings.HasPrefix(r.Path, "/cdn-blobs/") && r.Method == "GET" && r.Auth == "Bearer "+token
				}) != 1 {
					t.Errorf("no same-host blob GET with the token: %+v", reqs)
				}
			},
		},
		{
			name:  "hub refuses HEAD: downloaded unverified",
			setup: func(s *hubtest.Server) { s.SetFaults(hubtest.Faults{NoHead: true}) },
			ref:   "hf:" + repoID + "/tiny-Q4_K_M.gguf", want: bigFile, verified: false,
		},
		{
			name:  "tag reference: sha256 from the listing when HEAD has none",
			setup: func(s *hubtest.Server) { s.SetFaults(hubtest.Faults{NoLinkedETag: true, NoLinkedSize: true}) },
			ref:   "hf:" + repoID + ":Q4_K_M", want: bigFile, verified: true,
		},
		{
			name:  "hub answers 503 twice, then works",
			setup: func(s *hubtest.Server) { s.SetFaults(hubtest.Faults{HubStatus: []int{503, 502}}) },
			ref:   "hf:" + repoID + "/tiny-Q4_K_M.gguf", want: bigFile, verified: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := hubtest.New()
			defer s.Close()
			standardRepo(s)
			if tt.setup != nil {
				tt.setup(s)
			}
			c := testClient(t, s, tt.opts)
			m, err := c.Resolve(context.Background(), tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			checkContent(t, m.Path, tt.want)
			if m.SHA256 != sha(tt.want) || m.Size != int64(len(tt.want)) || m.Verified != tt.verified {
				t.Errorf("manifest sha256 %s size %d verified %v, want %s %d %v", m.SHA256, m.Size, m.Verified, sha(tt.want), len(tt.want), tt.verified)
			}
			if _, err := os.Stat(m.Path + ".partial"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("partial left behind: %v", err)
			}
			if tt.check != nil {
				tt.check(t, s.Requests())
			}
			// The manifest on disk is what Resolve returned.
			got, err := readManifest(c.pathsFor(mustRef(t, m.Ref)).manifest)
			if err != nil || got.SHA256 != m.SHA256 || got.Ref != m.Ref || got.URL == "" || got.Downloaded.IsZero() {
				t.Errorf("manifest on disk %+v, %v", got, err)
			}
		})
	}
}

func mustRef(t *testing.T, s string) Ref {
	t.Helper()
	r, err := ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(s *hubtest.Server)
		opts  func(o *Options)
		ref   string
		is    error    // errors.Is target
		msg   []string // substrings of the message
	}{
		{
			name: "missing file",
			ref:  "hf:" + repoID + "/nope.gguf", is: ErrNotFound,
			msg: []string{`file "nope.gguf" not found in ` + repoID, "HTTP 404 EntryNotFound"},
		},
		{
			name: "missing repository, no token (the hub says 401)",
			ref:  "hf:kiln-test/nope/x.gguf", is: ErrNotFound,
			msg: []string{"kiln-test/nope not found, or private or gated", "set HF_TOKEN"},
		},
		{
			name:  "missing repository with a token",
			setup: func(s *hubtest.Server) { s.AddToken("hf_valid") },
			opts:  func(o *Options) { o.NoToken, o.Token = false, "hf_valid" },
			ref:   "hf:kiln-test/nope/x.gguf", is: ErrNotFound,
			msg: []string{"repository kiln-test/nope not found", "HTTP 404"},
		},
		{
			name:  "private repository without a token",
			setup: func(s *hubtest.Server) { s.SetPrivate(repoID, "hf_owner") },
			ref:   "hf:" + repoID + "/small.gguf", is: ErrNotFound,
			msg: []string{"private or gated"},
		},
		{
			name:  "gated repository without a token",
			setup: func(s *hubtest.Server) { s.SetGated(repoID, "hf_granted") },
			ref:   "hf:" + repoID + "/tiny-Q4_K_M.gguf", is: ErrAccess,
			msg: []string{"gated", "accept its licence at", "/" + repoID, "set HF_TOKEN", "HTTP 401 GatedRepo"},
		},
		{
			name: "gated repository, token not granted",
			setup: func(s *hubtest.Server) {
				s.SetGated(repoID, "hf_granted")
				s.AddToken("hf_other")
			},
			opts: func(o *Options) { o.NoToken, o.Token = false, "hf_other" },
			ref:  "hf:" + repoID + "/tiny-Q4_K_M.gguf", is: ErrAccess,
			msg: []string{"no access yet", "accept its licence", "HTTP 403 GatedRepo"},
		},
		{
			name: "invalid token",
			opts: func(o *Options) { o.NoToken, o.Token = false, "hf_bogus" },
			ref:  "hf:" + repoID + "/small.gguf", is: ErrAccess,
			msg: []string{"rejected HF_TOKEN", "HTTP 401"},
		},
		{
			name: "missing revision",
			opts: func(o *Options) { o.Revision = "v9" },
			ref:  "hf:" + repoID + "/small.gguf", is: ErrNotFound,
			msg: []string{`revision "v9" not found`},
		},
		{
			name: "tag with no file",
			ref:  "hf:" + repoID + ":Q5_K_M", is: ErrNotFound,
			msg: []string{`no model file with quantization "Q5_K_M"`, "tiny-Q4_K_M.gguf", "tiny-Q8_0.gguf", "tiny-BF16-00001-of-00002.gguf (split, 2 files)"},
		},
		{
			name: "tag naming a split model",
			ref:  "hf:" + repoID + ":bf16", is: ErrNotFound,
			msg: []string{"split into 2 files"},
		},
		{
			name: "ambiguous tag",
			setup: func(s *hubtest.Server) {
				s.AddFile(repoID, "tiny-UD-Q8_0.gguf", blob(10, 9), true)
			},
			ref: "hf:" + repoID + ":Q8_0", is: ErrNotFound,
			msg: []string{"ambiguous", "tiny-Q8_0.gguf", "tiny-UD-Q8_0.gguf"},
		},
		{
			name:  "corrupted download: checksum mismatch",
			setup: func(s *hubtest.Server) { s.SetFaults(hubtest.Faults{CorruptCount: 1}) },
			ref:   "hf:" + repoID + "/tiny-Q4_K_M.gguf", is: ErrChecksum,
			msg: []string{"hashes to sha256", "the hub says " + sha(bigFile), "deleted"},
		},
		{
			name:  "hub down",
			setup: func(s *hubtest.Server) { s.SetFaults(hubtest.Faults{HubStatus: []int{503, 503, 503}}) },
			opts:  func(o *Options) { o.Retries = 2 },
			ref:   "hf:" + repoID + "/small.gguf",
			msg:   []string{"HTTP 503"},
		},
		{
			name:  "connection keeps dropping, no retries: partial kept",
			setup: func(s *hubtest.Server) { s.SetFaults(hubtest.Faults{DropAfter: 1000, DropCount: 1}) },
			opts:  func(o *Options) { o.Retries = -1 },
			ref:   "hf:" + repoID + "/tiny-Q4_K_M.gguf",
			msg:   []string{"1.0 kB kept in", "tiny-Q4_K_M.gguf.partial: run again to resume"},
		},
		{
			name: "bad reference",
			ref:  "hf:" + repoID + "/../x.gguf",
			msg:  []string{`".." segment`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := hubtest.New()
			defer s.Close()
			standardRepo(s)
			if tt.setup != nil {
				tt.setup(s)
			}
			c := testClient(t, s, tt.opts)
			m, err := c.Resolve(context.Background(), tt.ref)
			if err == nil {
				t.Fatalf("no error; got %s", m.Path)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), "hub: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			for _, want := range tt.msg {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if list, _ := c.List(); len(list) != 0 {
				t.Errorf("failed download listed in the cache: %+v", list)
			}
		})
	}
}

// A download cut short (no retries) leaves a .partial that the next call
// resumes with a Range request.
func TestResumeAcrossCalls(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	standardRepo(s)
	c := testClient(t, s, func(o *Options) { o.Retries = -1 })
	ref := "hf:" + repoID + "/tiny-Q4_K_M.gguf"
	p := c.pathsFor(mustRef(t, ref))

	s.SetFaults(hubtest.Faults{DropAfter: 123_456, DropCount: 1})
	if _, err := c.Resolve(context.Background(), ref); err == nil {
		t.Fatal("no error from a dropped connection without retries")
	}
	if st, err := os.Stat(p.partial); err != nil || st.Size() != 123_456 {
		t.Fatalf("partial: %v, %v; want 123456 bytes", st, err)
	}
	m, err := c.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	checkContent(t, m.Path, bigFile)
	if !m.Verified {
		t.Error("resumed download not verified")
	}
	reqs := s.Requests()
	if count(reqs, func(r hubtest.Request) bool { return r.Server == "cdn" && r.Range == "bytes=123456-" }) != 1 {
		t.Errorf("second call did not resume at 123456: %+v", reqs)
	}
	if _, err := os.Stat(p.partialInfo); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial state left behind: %v", err)
	}
}

// A partial of another version of the file (the hub's sha256 changed) is
// not resumed: the download starts over.
func TestStalePartialStartsOver(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	standardRepo(s)
	c := testClient(t, s, func(o *Options) { o.Retries = -1 })
	ref := "hf:" + repoID + "/tiny-Q4_K_M.gguf"
	s.SetFaults(hubtest.Faults{DropAfter: 1000, DropCount: 1})
	if _, err := c.Resolve(context.Background(), ref); err == nil {
		t.Fatal("no error")
	}
	newer := blob(300_000, 99)
	s.AddFile(repoID, "tiny-Q4_K_M.gguf", newer, true)
	m, err := c.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	checkContent(t, m.Path, newer)
	if n := count(s.Requests(), func(r hubtest.Request) bool { return r.Range != "" }); n != 0 {
		t.Errorf("%d range requests for a partial of another version", n)
	}
}

// 416 handling, with the size unknown (no X-Linked-Size) so the client must
// ask: a complete partial is accepted as is, a longer one starts over.
func TestRangeNotSatisfiable(t *testing.T) {
	for _, tt := range []struct {
		name    string
		partial []byte
		gets    int // CDN GETs expected
	}{
		{"partial already complete", bigFile, 1},
		{"partial longer than the file", append(append([]byte(nil), bigFile...), 1, 2, 3), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := hubtest.New()
			defer s.Close()
			standardRepo(s)
			s.SetFaults(hubtest.Faults{NoLinkedSize: true})
			c := testClient(t, s, nil)
			ref := "hf:" + repoID + "/tiny-Q4_K_M.gguf"
			p := c.pathsFor(mustRef(t, ref))
			os.MkdirAll(p.final[:strings.LastIndexByte(p.final, '/')], 0o755)
			if err := os.WriteFile(p.partial, tt.partial, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := writeJSON(p.partialInfo, partialState{URL: c.resolveURL(mustRef(t, ref), "main"), SHA256: sha(bigFile), Size: -1}); err != nil {
				t.Fatal(err)
			}
			m, err := c.Resolve(context.Background(), ref)
			if err != nil {
				t.Fatal(err)
			}
			checkContent(t, m.Path, bigFile)
			reqs := s.Requests()
			if n := count(reqs, func(r hubtest.Request) bool { return r.Server == "cdn" && r.Method == "GET" }); n != tt.gets {
				t.Errorf("%d CDN GETs, want %d: %+v", n, tt.gets, reqs)
			}
			if count(reqs, func(r hubtest.Request) bool {
				return r.Server == "cdn" && r.Range == "bytes="+strconv.Itoa(len(tt.partial))+"-"
			}) != 1 {
				t.Errorf("no request from the partial's end: %+v", reqs)
			}
		})
	}
}

// After a checksum mismatch nothing is left, and the next call succeeds.
func TestChecksumMismatchThenRetry(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	standardRepo(s)
	s.SetFaults(hubtest.Faults{CorruptCount: 1})
	c := testClient(t, s, nil)
	ref := "hf:" + repoID + "/tiny-Q4_K_M.gguf"
	p := c.pathsFor(mustRef(t, ref))
	if _, err := c.Resolve(context.Background(), ref); !errors.Is(err, ErrChecksum) {
		t.Fatalf("error %v, want ErrChecksum", err)
	}
	for _, f := range []string{p.final, p.partial, p.partialInfo, p.manifest} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after a checksum mismatch", f)
		}
	}
	m, err := c.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	checkContent(t, m.Path, bigFile)
}

// Once cached, a reference resolves without the hub, by file or by tag.
func TestResolveCachedOffline(t *testing.T) {
	s := hubtest.New()
	standardRepo(s)
	home := t.TempDir()
	opts := Options{Endpoint: s.URL(), Home: home, Getenv: noEnv, NoToken: true, RetryWait: time.Millisecond}
	first, err := Resolve(context.Background(), "hf:"+repoID+":Q4_K_M", opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Close() // the hub is gone
	for _, ref := range []string{"hf:" + repoID + ":Q4_K_M", "hf:" + repoID + ":q4_k_m", "hf:" + repoID + "/tiny-Q4_K_M.gguf", "hf:" + repoID} {
		got, err := Resolve(context.Background(), ref, opts)
		if err != nil || got != first {
			t.Errorf("Resolve(%s) offline = %q, %v; want %q", ref, got, err, first)
		}
	}
	if _, err := Resolve(context.Background(), "hf:"+repoID+":Q8_0", opts); err == nil {
		t.Error("an uncached tag resolved with the hub gone")
	}
	// Another revision is another file.
	o2 := opts
	o2.Revision = "v2"
	o2.Retries = -1
	if _, err := Resolve(context.Background(), "hf:"+repoID+"/tiny-Q4_K_M.gguf", o2); err == nil {
		t.Error("a cached main file served for revision v2")
	}
}

func TestResolveLocalPath(t *testing.T) {
	for _, p := range []string{"model.gguf", "/abs/x.gguf", "./hf:x", ""} {
		got, err := Resolve(context.Background(), p, Options{Getenv: func(string) string { panic("read the environment for a local path") }})
		if err != nil || got != p {
			t.Errorf("Resolve(%q) = %q, %v", p, got, err)
		}
	}
}

// Pull asks the hub each time and downloads only a changed file.
func TestPull(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	standardRepo(s)
	c := testClient(t, s, nil)
	ref := "hf:" + repoID + "/tiny-Q4_K_M.gguf"
	cdnGETs := func() int {
		return count(s.Requests(), func(r hubtest.Request) bool { return r.Server == "cdn" && r.Method == "GET" })
	}
	m, fresh, err := c.Pull(context.Background(), ref)
	if err != nil || !fresh {
		t.Fatalf("first pull: fresh %v, %v", fresh, err)
	}
	m2, fresh, err := c.Pull(context.Background(), ref)
	if err != nil || fresh || m2.SHA256 != m.SHA256 || cdnGETs() != 1 {
		t.Fatalf("second pull: fresh %v, %v, %d downloads; want the cached file", fresh, err, cdnGETs())
	}
	newer := blob(250_000, 42)
	s.AddFile(repoID, "tiny-Q4_K_M.gguf", newer, true)
	m3, fresh, err := c.Pull(context.Background(), ref)
	if err != nil || !fresh {
		t.Fatalf("pull after a change: fresh %v, %v", fresh, err)
	}
	checkContent(t, m3.Path, newer)
	if m3.Path != m.Path || m3.Commit == m.Commit || m3.SHA256 != sha(newer) {
		t.Errorf("manifest after update: %+v", m3)
	}
	// The download was pinned to the commit HEAD reported.
	if count(s.Requests(), func(r hubtest.Request) bool {
		return r.Method == "GET" && strings.Contains(r.Path, "/resolve/"+m3.Commit+"/")
	}) != 1 {
		t.Error("the GET was not pinned to X-Repo-Commit")
	}
}

// Goroutines resolving the same file share one download.
func TestConcurrentResolve(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	standardRepo(s)
	c := testClient(t, s, nil)
	ref := "hf:" + repoID + "/tiny-Q4_K_M.gguf"
	const n = 4
	errs := make(chan error, n)
	paths := make(chan string, n)
	for range n {
		go func() {
			m, err := c.Resolve(context.Background(), ref)
			errs <- err
			paths <- m.Path
		}()
	}
	var first string
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		p := <-paths
		if first == "" {
			first = p
		} else if p != first {
			t.Errorf("paths differ: %s, %s", p, first)
		}
	}
	checkContent(t, first, bigFile)
	if got := count(s.Requests(), func(r hubtest.Request) bool { return r.Server == "cdn" && r.Method == "GET" }); got != 1 {
		t.Errorf("%d downloads for %d concurrent resolves, want 1", got, n)
	}
}

// Cancelling the context stops the download, says so, and keeps the partial.
func TestCancel(t *testing.T) {
	s := hubtest.New()
	defer s.Close()
	standardRepo(s)
	s.SetFaults(hubtest.Faults{StallAfter: 10_000, StallCount: 1})
	c := testClient(t, s, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	ref := "hf:" + repoID + "/tiny-Q4_K_M.gguf"
	_, err := c.Resolve(ctx, ref)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's", err)
	}
	if !strings.Contains(err.Error(), "run again to resume") {
		t.Errorf("error %q does not say the partial is kept", err)
	}
	if st, err := os.Stat(c.pathsFor(mustRef(t, ref)).partial); err != nil || st.Size() != 10_000 {
		t.Errorf("partial %v, %v; want 10000 bytes", st, err)
	}
}
