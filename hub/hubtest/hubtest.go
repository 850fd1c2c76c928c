// Package hubtest is a fake Hugging Face hub for tests: the API and
// resolve endpoints on one httptest server, LFS content on a second one (a
// different host:port, as the real hub redirects large files to its CDN),
// with switches for the failures a download must survive.
//
//	hub  GET  /api/models/{owner}/{repo}/tree/{rev}?recursive=true[&cursor=N]
//	     HEAD|GET /{owner}/{repo}/resolve/{rev}/{path...}
//	          LFS file:   302 -> {cdn}/blobs/{sha256}?sig=fake,
//	                      X-Linked-Etag: "sha256", X-Linked-Size, X-Repo-Commit
//	          small file: 200, ETag: "git blob sha1", Range honoured
//	          errors:     401/403/404 with X-Error-Code and X-Error-Message
//	          renamed:    307 to the new /{owner}/{repo}/... on the same host
//	cdn  HEAD|GET /blobs/{sha256}   Range honoured (bytes=N- and bytes=N-M)
//	hub  HEAD|GET /cdn-blobs/{sha256}  the same, when Faults.SameHostCDN
//
// Revisions are "main" or any commit the repository had (each AddFile makes
// a new one). Access follows the real hub: a missing or private repository
// answers 401 RepoNotFound without a token and 404 with one; a gated one
// 401 GatedRepo without a token and 403 GatedRepo with a token not granted;
// an unknown token 401 "Invalid credentials in Authorization header".
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Faults are failures the fake injects into blob responses (the file bytes,
// from the CDN or, for small files, the hub) and hub responses. Counts are
// consumed one per response.
type Faults struct {
	IgnoreRange  bool  // answer a Range request with 200 and the whole file
	DropAfter    int64 // close the connection after this many body bytes ...
	DropCount    int   // ... in the next DropCount responses
	StallAfter   int64 // stop sending (without closing) after this many bytes ...
	StallCount   int   // ... in the next StallCount responses
	CorruptCount int   // flip one byte in the next CorruptCount responses
	NoHead       bool  // the hub answers HEAD on resolve URLs with 405
	NoLinkedSize bool  // the hub omits X-Linked-Size on LFS redirects
	NoLinkedETag bool  // the hub omits X-Linked-Etag (no sha256 published)
	PageSize     int   // tree API entries per page; 0: one page
	HubStatus    []int // answer the next hub requests with these statuses (e.g. 503)
	SameHostCDN  bool  // redirect LFS files to /cdn-blobs/{sha256} on the hub itself (relative Location), served with a non-sha256 ETag, as some mirrors do
}

// Request is one request a server received.
type Request struct {
	Server string // "hub" or "cdn"
	Method string
	Path   string // unescaped
	Query  string // raw
	Range  string // the Range header
	Auth   string // the Authorization header
}

type file struct {
	data   []byte
	lfs    bool
	sha256 string // hex of data
	gitOID string // git blob id: sha1("blob <len>\x00" + data)
}

type repo struct {
	commits  []string                    // oldest first; the last is main
	trees    map[string]map[string]*file // commit -> path -> file
	private  bool
	gated    bool
	allowed  map[string]bool // tokens granted a private or gated repo
	commitNo int
}

// Server is the fake hub. Its methods are safe to call while requests run.
type Server struct {
	hub, cdn *httptest.Server

	mu      sync.Mutex
	repos   map[string]*repo  // "owner/name"
	renamed map[string]string // old "owner/name" -> new
	blobs   map[string][]byte // sha256 -> data, for the CDN
	tokens  map[string]bool
	faults  Faults
	log     []Request
}

// New starts a fake hub and its CDN; Close stops both.
func New() *Server {
	s := &Server{
		repos:   map[string]*repo{},
		renamed: map[string]string{},
		blobs:   map[string][]byte{},
		tokens:  map[string]bool{},
	}
	s.hub = httptest.NewServer(http.HandlerFunc(s.serveHub))
	s.cdn = httptest.NewServer(http.HandlerFunc(s.serveCDN))
	return s
}

// URL is the hub's endpoint (what KILN_HF_ENDPOINT would name).
func (s *Server) URL() string { return s.hub.URL }

// Close stops both servers.
func (s *Server) Close() {
	s.hub.Close()
	s.cdn.Close()
}

// AddFile stores data at path in repository id ("owner/name"), creating the
// repository, as a new commit. lfs files are served through the CDN with
// their sha256 published; others directly with a git ETag.
func (s *Server) AddFile(id, path string, data []byte, lfs bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[id]
	if rp == nil {
		rp = &repo{trees: map[string]map[string]*file{}, allowed: map[string]bool{}}
		s.repos[id] = rp
	}
	tree := map[string]*file{}
	if n := len(rp.commits); n > 0 {
		for k, v := range rp.trees[rp.commits[n-1]] {
			tree[k] = v
		}
	}
	sum := sha256.Sum256(data)
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	f := &file{data: append([]byte(nil), data...), lfs: lfs, sha256: hex.EncodeToString(sum[:]), gitOID: hex.EncodeToString(h.Sum(nil))}
	tree[path] = f
	s.blobs[f.sha256] = f.data
	rp.commitNo++
	c := sha1.Sum([]byte(fmt.Sprintf("%s@%d", id, rp.commitNo)))
	commit := hex.EncodeToString(c[:])
	rp.commits = append(rp.commits, commit)
	rp.trees[commit] = tree
}

// SetGated makes a repository gated: only the given tokens may download.
func (s *Server) SetGated(id string, tokens ...string) { s.restrict(id, false, tokens) }

// SetPrivate makes a repository private: invisible but to the given tokens.
func (s *Server) SetPrivate(id string, tokens ...string) { s.restrict(id, true, tokens) }

func (s *Server) restrict(id string, private bool, tokens []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[id]
	if rp == nil {
		panic("hubtest: no repository " + id)
	}
	rp.private, rp.gated = private, !private
	for _, t := range tokens {
		rp.allowed[t] = true
		s.tokens[t] = true
	}
}

// AddToken makes tokens valid (granted no gated or private repository).
func (s *Server) AddToken(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tokens {
		s.tokens[t] = true
	}
}

// Rename moves a repository: requests to the old id are redirected (307)
// to the new one on the same host.
func (s *Server) Rename(oldID, newID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[newID] = s.repos[oldID]
	delete(s.repos, oldID)
	s.renamed[oldID] = newID
}

// SetFaults replaces the injected failures.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.HubStatus = append([]int(nil), f.HubStatus...)
	s.faults = f
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// SHA256 returns the hex sha256 of a file at main.
func (s *Server) SHA256(id, path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[id]
	if rp == nil {
		return ""
	}
	if f := rp.trees[rp.commits[len(rp.commits)-1]][path]; f != nil {
		return f.sha256
	}
	return ""
}

func (s *Server) record(server string, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, Request{Server: server, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization")})
}

func hubError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (s *Server) serveHub(w http.ResponseWriter, r *http.Request) {
	s.record("hub", r)
	s.mu.Lock()
	if len(s.faults.HubStatus) > 0 {
		st := s.faults.HubStatus[0]
		s.faults.HubStatus = s.faults.HubStatus[1:]
		s.mu.Unlock()
		hubError(w, st, "", http.StatusText(st))
		return
	}
	s.mu.Unlock()

	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	for i, seg := range segs {
		u, err := url.PathUnescape(seg)
		if err != nil {
			http.Error(w, "bad path", http.StatusBadRequest)
			return
		}
		segs[i] = u
	}
	switch {
	case len(segs) == 2 && segs[0] == "cdn-blobs":
		s.mu.Lock()
		data, found := s.blobs[segs[1]]
		s.mu.Unlock()
		if !found {
			http.Error(w, "NoSuchKey", http.StatusNotFound)
			return
		}
		w.Header().Set("ETag", `"`+segs[1][:32]+`"`)
		s.serveBlob(w, r, data)
	case len(segs) == 6 && segs[0] == "api" && segs[1] == "models" && segs[4] == "tree" && r.Method == http.MethodGet:
		s.serveTree(w, r, segs[2]+"/"+segs[3], segs[5])
	case len(segs) >= 5 && segs[2] == "resolve" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.serveResolve(w, r, segs[0]+"/"+segs[1], segs[3], strings.Join(segs[4:], "/"))
	default:
		hubError(w, http.StatusNotFound, "", "Sorry, we can't find the page you are looking for.")
	}
}

// access applies the hub's rules; it answers and returns nil when the
// request may not see the repository (or was redirected).
func (s *Server) access(w http.ResponseWriter, r *http.Request, id string) (tree func(rev string) (map[string]*file, string)) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok != "" && !s.tokens[tok] {
		hubError(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
		return nil
	}
	if to, ok := s.renamed[id]; ok {
		_, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/api/models"), id)
		prefix := ""
		if strings.HasPrefix(r.URL.Path, "/api/models/") {
			prefix = "/api/models"
		}
		loc := prefix + "/" + to + rest
		if r.URL.RawQuery != "" {
			loc += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusTemporaryRedirect)
		return nil
	}
	rp := s.repos[id]
	if rp == nil || rp.private && !rp.allowed[tok] {
		if tok == "" {
			hubError(w, http.StatusUnauthorized, "RepoNotFound", "Repository not found")
		} else {
			hubError(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
		}
		return nil
	}
	if rp.gated && !rp.allowed[tok] {
		if tok == "" {
			hubError(w, http.StatusUnauthorized, "GatedRepo", "Access to model "+id+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
		} else {
			hubError(w, http.StatusForbidden, "GatedRepo", "Access to model "+id+" is restricted and you are not in the authorized list. Visit "+s.hub.URL+"/"+id+" to ask for access.")
		}
		return nil
	}
	commits := append([]string(nil), rp.commits...)
	trees := rp.trees
	return func(rev string) (map[string]*file, string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if rev == "main" {
			c := commits[len(commits)-1]
			return trees[c], c
		}
		if t, ok := trees[rev]; ok {
			return t, rev
		}
		return nil, ""
	}
}

func (s *Server) serveTree(w http.ResponseWriter, r *http.Request, id, rev string) {
	snap := s.access(w, r, id)
	if snap == nil {
		return
	}
	tree, _ := snap(rev)
	if tree == nil {
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	type lfs struct {
		OID         string `json:"oid"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type entry struct {
		Type string `json:"type"`
		OID  string `json:"oid"`
		Size int    `json:"size"`
		Path string `json:"path"`
		LFS  *lfs   `json:"lfs,omitempty"`
	}
	dirs := map[string]bool{}
	var entries []entry
	for p, f := range tree {
		for d := p; strings.Contains(d, "/"); {
			d = d[:strings.LastIndexByte(d, '/')]
			dirs[d] = true
		}
		e := entry{Type: "file", OID: f.gitOID, Size: len(f.data), Path: p}
		if f.lfs {
			e.LFS = &lfs{OID: f.sha256, Size: len(f.data), PointerSize: 134}
		}
		entries = append(entries, e)
	}
	for d := range dirs {
		entries = append(entries, entry{Type: "directory", OID: strings.Repeat("0", 40), Path: d})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	s.mu.Lock()
	page := s.faults.PageSize
	s.mu.Unlock()
	if page > 0 {
		from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		from = min(max(from, 0), len(entries))
		to := min(from+page, len(entries))
		if to < len(entries) {
			q := r.URL.Query()
			q.Set("cursor", strconv.Itoa(to))
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, s.hub.URL, r.URL.EscapedPath(), q.Encode()))
		}
		entries = entries[from:to]
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(entries)
}

func (s *Server) serveResolve(w http.ResponseWriter, r *http.Request, id, rev, path string) {
	snap := s.access(w, r, id)
	if snap == nil {
		return
	}
	s.mu.Lock()
	f := s.faults
	s.mu.Unlock()
	if f.NoHead && r.Method == http.MethodHead {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	tree, commit := snap(rev)
	if tree == nil {
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	fl := tree[path]
	if fl == nil {
		hubError(w, http.StatusNotFound, "EntryNotFound", "Entry not found")
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	if !fl.lfs {
		w.Header().Set("ETag", `"`+fl.gitOID+`"`)
		s.serveBlob(w, r, fl.data)
		return
	}
	if !f.NoLinkedETag {
		w.Header().Set("X-Linked-Etag", `"`+fl.sha256+`"`)
	}
	if !f.NoLinkedSize {
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(fl.data)))
	}
	w.Header().Set("ETag", `W/"`+fl.gitOID[:20]+`"`)
	if f.SameHostCDN {
		w.Header().Set("Location", "/cdn-blobs/"+fl.sha256)
	} else {
		w.Header().Set("Location", s.cdn.URL+"/blobs/"+fl.sha256+"?sig=fake&expires=9999999999")
	}
	w.WriteHeader(http.StatusFound)
}

func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	s.record("cdn", r)
	sha, ok := strings.CutPrefix(r.URL.Path, "/blobs/")
	s.mu.Lock()
	data, found := s.blobs[sha]
	s.mu.Unlock()
	if !ok || !found || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.Error(w, "NoSuchKey", http.StatusNotFound)
		return
	}
	s.serveBlob(w, r, data)
}

// serveBlob answers with the file bytes, honouring Range and the faults.
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request, data []byte) {
	s.mu.Lock()
	f := &s.faults
	ignoreRange := f.IgnoreRange
	drop, stall, corrupt := int64(-1), int64(-1), false
	if r.Method == http.MethodGet {
		if f.DropCount > 0 {
			f.DropCount--
			drop = f.DropAfter
		} else if f.StallCount > 0 {
			f.StallCount--
			stall = f.StallAfter
		}
		if f.CorruptCount > 0 {
			f.CorruptCount--
			corrupt = true
		}
	}
	s.mu.Unlock()

	body := data
	if corrupt && len(data) > 0 {
		body = append([]byte(nil), data...)
		body[len(body)/2] ^= 0xff
	}
	n := int64(len(body))
	start, end, status := int64(0), n-1, http.StatusOK
	w.Header().Set("Accept-Ranges", "bytes")
	if rg := r.Header.Get("Range"); rg != "" && !ignoreRange {
		a, b, ok := parseRange(rg)
		if !ok || a >= n {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", n))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start, status = a, http.StatusPartialContent
		if b >= 0 && b < end {
			end = b
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, n))
	}
	part := body[start : end+1]
	w.Header().Set("Content-Length", strconv.Itoa(len(part)))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	switch {
	case drop >= 0:
		w.Write(part[:min(drop, int64(len(part)))])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the server closes the connection mid-body
	case stall >= 0:
		w.Write(part[:min(stall, int64(len(part)))])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	}
	w.Write(part)
}

// parseRange reads "bytes=A-" and "bytes=A-B" (B -1 when absent).
func parseRange(s string) (a, b int64, ok bool) {
	spec, found := strings.CutPrefix(s, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false
	}
	x, y, found := strings.Cut(spec, "-")
	if !found {
		return 0, 0, false
	}
	a, err := strconv.ParseInt(x, 10, 64)
	if err != nil || a < 0 {
		return 0, 0, false
	}
	b = -1
	if y != "" {
		if b, err = strconv.ParseInt(y, 10, 64); err != nil || b < a {
			return 0, 0, false
		}
	}
	return a, b, true
}
