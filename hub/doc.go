// Package hub downloads models from the Hugging Face hub into kiln's cache
// and turns MODEL arguments into local paths: a local path stays as it is,
//
//	hf:OWNER/REPO/PATH/FILE.gguf   one file of a repository
//	hf:OWNER/REPO:QUANT            the .gguf whose name carries the tag (Pick)
//	hf:OWNER/REPO                  Q4_K_M, else Q8_0, else the only model file
//
// is downloaded once and then served from the cache (Resolve). Pull asks
// the hub again and downloads only when the content changed; List and
// Remove manage the cache. Package hubtest is a fake hub for tests.
//
// # Requests (what the real hub answers; see hubtest for the fake)
//
//	GET  {base}/api/models/{owner}/{repo}/tree/{rev}?recursive=true
//	     -> [{"type":"file","path":...,"size":...,"lfs":{"oid":sha256,...}}],
//	        further pages in Link: <...>; rel="next"           (tag references)
//	HEAD {base}/{owner}/{repo}/resolve/{rev}/{file}
//	     -> 302 to the CDN with X-Linked-Etag: "sha256", X-Linked-Size and
//	        X-Repo-Commit (LFS files), or 200 with a git ETag (small files);
//	        same-host redirects (renamed repositories) are followed;
//	        401/403/404 carry X-Error-Code: GatedRepo, RepoNotFound,
//	        EntryNotFound, RevisionNotFound
//	GET  {base}/{owner}/{repo}/resolve/{commit}/{file}   (pinned to X-Repo-Commit)
//	     with Range: bytes=N- when resuming; redirects are followed.
//
// The token (HF_TOKEN) is added by the transport to requests for the
// endpoint's own scheme and host only, so no redirect hands it to a CDN.
//
// # Cache layout ($KILN_HOME, default ~/.cache/kiln)
//
//	models/OWNER/REPO/FILE               complete, verified file: what Resolve returns
//	models/OWNER/REPO/FILE.partial       bytes [0, n) of a download in progress
//	models/OWNER/REPO/FILE.partial.json  what the partial is a prefix of (sha256/etag, size)
//	manifests/OWNER/REPO/FILE.json       Manifest: ref, size, sha256, source URL, time
//	locks/OWNER/REPO/FILE.lock           flock'd while one process downloads FILE
//
// # Invariants
//
//   - A file is in the cache when its manifest exists and its size matches;
//     the file is renamed into place only after the whole of it hashed to
//     the hub's sha256 (when the hub published one), and the manifest is
//     written after the rename.
//   - A .partial is always a prefix of the file its .partial.json names and
//     its bytes are all in the running sha256; resuming re-hashes the prefix.
//   - One download per file at a time, across processes (flock on Unix).
//
// # Waits: connect (10 s), first byte (20 s), stall (1 min)
//
// Every request must get a connection within ConnectTimeout and, once
// connected, the first byte of a response within ResponseTimeout; either
// failing is a *WaitError naming which, not retried (a host that accepts
// and never answers fails in seconds). Once a body flows, StallTimeout
// bounds each gap between bytes, and a stall is retried with a resume.
//
// # Resuming (one attempt; retried on network errors, 5xx, 429 and stalls)
//
//	partial holds [0, off)        request Range: bytes=off-   (none when off == 0)
//	206 bytes off-(n-1)/n    ->   append [off, n)
//	206 with another start   ->   empty the partial, ask again without Range
//	200 (Range ignored)      ->   empty the partial, take the whole body
//	416 bytes */n, n == off  ->   already complete
//	416 otherwise            ->   empty the partial, ask again without Range
package hub
