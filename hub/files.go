package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// RepoFile is one file of a repository as the hub lists it.
type RepoFile struct {
	Path   string // "/"-separated path in the repository
	Size   int64  // bytes
	SHA256 string // the LFS object id (sha256 of the content); "" for a file not in LFS
}

// treeEntry is one element of GET /api/models/{repo}/tree/{rev}?recursive=true:
//
//	{"type":"file","oid":"<git sha1>","size":1234,"path":"x.Q4_K_M.gguf",
//	 "lfs":{"oid":"<sha256>","size":1234,"pointerSize":135}}
//
// Directories come as {"type":"directory",...} and are skipped.
type treeEntry struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	LFS  *struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// maxTreeBody bounds one page of the listing (the hub pages at 1,000
// entries, about 200 KB).
const maxTreeBody = 64 << 20

// Files lists every file of owner/repo at the client's revision, through
// the tree API llama.cpp's -hf uses (it carries the LFS sha256 that the
// older /api/models/{repo} "siblings" list lacks), following its
// Link: <...>; rel="next" pages.
func (c *Client) Files(ctx context.Context, owner, repo string) ([]RepoFile, error) {
	ref := Ref{Owner: owner, Repo: repo}
	if err := checkName("owner", owner); err != nil {
		return nil, fmt.Errorf("hub: %v", err)
	}
	if err := checkName("repository", repo); err != nil {
		return nil, fmt.Errorf("hub: %v", err)
	}
	next := c.base.String() + "/api/models/" + owner + "/" + repo + "/tree/" + url.PathEscape(c.opts.Revision) + "?recursive=true"
	var files []RepoFile
	for page := 0; next != ""; page++ {
		if page == 1000 {
			return nil, fmt.Errorf("hub: listing %s: more than 1000 pages", ref.RepoID())
		}
		var entries []treeEntry
		var link string
		err := c.retry(ctx, func() (bool, error) {
			var err error
			entries, link, err = c.treePage(ctx, next, ref)
			return false, err
		})
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Type != "file" || checkFile(e.Path) != nil {
				continue // directories; paths we could not store safely
			}
			f := RepoFile{Path: e.Path, Size: e.Size}
			if e.LFS != nil {
				f.Size = e.LFS.Size
				if oid := strings.ToLower(e.LFS.OID); isSHA256(oid) {
					f.SHA256 = oid
				}
			}
			files = append(files, f)
		}
		next = ""
		if link != "" {
			u, err := url.Parse(link)
			if err != nil {
				return nil, fmt.Errorf("hub: listing %s: bad next-page link %q", ref.RepoID(), link)
			}
			u = c.base.ResolveReference(u)
			if u.Scheme != c.base.Scheme || u.Host != c.base.Host {
				return nil, fmt.Errorf("hub: listing %s: next-page link %q leaves the hub", ref.RepoID(), link)
			}
			next = u.String()
		}
	}
	return files, nil
}

// treePage fetches one page and returns its entries and the next page's
// link ("" on the last page).
func (c *Client) treePage(ctx context.Context, u string, ref Ref) ([]treeEntry, string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StallTimeout)
	defer cancel()
	rctx, done := c.bounded(ctx, hostOf(u))
	defer done()
	req, err := newRequest(rctx, http.MethodGet, u)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if we := waitCause(rctx); we != nil {
			return nil, "", fmt.Errorf("hub: listing %s: %w", ref.RepoID(), we)
		}
		return nil, "", &netError{op: "listing " + ref.RepoID(), err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", c.statusError(resp, ref)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTreeBody+1))
	if err != nil {
		return nil, "", &netError{op: "listing " + ref.RepoID(), err: err}
	}
	if len(body) > maxTreeBody {
		return nil, "", fmt.Errorf("hub: listing %s: response larger than %d bytes", ref.RepoID(), maxTreeBody)
	}
	var entries []treeEntry
	if err := json.Unmarshal(body, &entries); err != nil {
		return nil, "", fmt.Errorf("hub: listing %s: the hub's answer is not a file list: %v", ref.RepoID(), err)
	}
	return entries, nextLink(resp.Header.Values("Link")), nil
}

// nextLink finds the rel="next" target in Link headers:
//
//	Link: <https://huggingface.co/api/models/o/r/tree/main?recursive=true&cursor=...>; rel="next"
func nextLink(values []string) string {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(part, ";")
			if !ok {
				continue
			}
			target = strings.TrimSpace(target)
			if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && strings.EqualFold(strings.Trim(v, `"`), "next") {
					return target[1 : len(target)-1]
				}
			}
		}
	}
	return ""
}
