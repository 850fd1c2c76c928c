package main

import (
	"fmt"
	"io"

	"kiln/internal/memstat"
	"kiln/kernels"
	"kiln/model"
)

// memReport is what a bench run says about memory, so that "RSS ≈
// weights + KV pool + a small constant" can be read off. The RSS figures
// come from /proc/self/status (Linux); elsewhere they are null in JSON
// and n/a in the table.
type memReport struct {
	WeightsBytes uint64 `json:"weights_bytes"`        // the weights' tensor data (model_bytes)
	KVPoolBytes  int64  `json:"kv_pool_bytes"`        // the engine's KV pool: blocks x bytes per block
	KVType       string `json:"kv_cache_dtype"`       // the pool's element type (--kv-cache-dtype)
	KVTokens     int    `json:"kv_capacity_tokens"`   // token slots the pool holds: blocks x block size
	RSSLoad      *int64 `json:"rss_after_load_bytes"` // VmRSS once the weights are loaded, before the pool exists
	RSSRun       *int64 `json:"rss_after_run_bytes"`  // VmRSS after the run
	RSSPeak      *int64 `json:"rss_peak_bytes"`       // VmHWM after the run

	kvType kernels.KVType // what KVType names
}

// memAfterLoad starts a report once the weights are loaded, for a KV pool
// of type kvType.
func memAfterLoad(weights uint64, kvType kernels.KVType) memReport {
	r := memReport{WeightsBytes: weights, KVType: kvType.String(), kvType: kvType}
	if st, err := memstat.Self(); err == nil {
		r.RSSLoad = &st.RSS
	}
	return r
}

// afterRun adds the pool's size (numBlocks blocks of blockSize slots of
// c's KV, stored as the report's type) and the resident set after the run.
func (r *memReport) afterRun(c *model.Config, numBlocks, blockSize int) {
	r.KVPoolBytes = int64(numBlocks) * int64(c.KVBytesPerBlock(blockSize, r.kvType))
	r.KVTokens = numBlocks * blockSize
	if st, err := memstat.Self(); err == nil {
		r.RSSRun, r.RSSPeak = &st.RSS, &st.HWM
	}
}

// print writes the report's table line.
func (r *memReport) print(w io.Writer) {
	rss := "RSS n/a (no /proc/self/status)"
	if r.RSSLoad != nil && r.RSSRun != nil {
		rss = fmt.Sprintf("RSS %s after load, %s after the run (peak %s)", fmtBytes(*r.RSSLoad), fmtBytes(*r.RSSRun), fmtBytes(*r.RSSPeak))
	}
	fmt.Fprintf(w, "memory    %s; weights %s, KV pool %s (%s, %d tokens)\n", rss, fmtBytes(int64(r.WeightsBytes)), fmtBytes(r.KVPoolBytes), r.KVType, r.KVTokens)
}
