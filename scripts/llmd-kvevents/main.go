// Command llmd-kvevents feeds kiln's KV-cache events (kvcache.Pool's
// observer, encoded by kvevents.AppendBatch) through llm-d-kv-cache
// v0.9.0's own consumer: the VLLMAdapter that parses them, the kvevents.Pool
// that files them, an in-memory index, and the token processor that
// recomputes llm-d's block keys from token ids (block size 16, as kiln's).
// It checks that llm-d then sees exactly the prefixes kiln's pool holds:
// stored (with a parent, after a prefix hit), evicted, cleared. A separate
// module, so kiln's go.mod stays free of llm-d's Kubernetes dependencies;
// run.sh builds and runs it (it needs the module proxy or a warm cache).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/llm-d/llm-d-kv-cache/pkg/kvcache/kvblock"
	lkv "github.com/llm-d/llm-d-kv-cache/pkg/kvevents"
	"github.com/llm-d/llm-d-kv-cache/pkg/kvevents/engineadapter"

	"kiln/kvcache"
	"kiln/kvevents"
)

const pod, model, bs = "10.0.0.1:8000", "m", 16

func main() {
	ctx := context.Background()
	index, err := kvblock.NewInMemoryIndex(kvblock.DefaultInMemoryIndexConfig())
	check(err)
	tp, err := kvblock.NewChunkedTokenDatabase(&kvblock.TokenProcessorConfig{BlockSizeTokens: bs})
	check(err)
	cfg := lkv.DefaultConfig()
	cfg.Concurrency = 1
	lp := lkv.NewPool(cfg, index, tp, engineadapter.NewVLLMAdapter())
	lp.Start(ctx)

	kp, err := kvcache.New(8, bs)
	check(err)
	var evs []kvcache.Event
	kp.SetObserver(func(e kvcache.Event) { e.Tokens = append([]int32(nil), e.Tokens...); evs = append(evs, e) })
	var seq uint64
	flush := func() {
		payload, err := kvevents.AppendBatch(nil, float64(time.Now().UnixNano())/1e9, evs, bs)
		check(err)
		lp.AddTask(&lkv.RawMessage{Topic: "kv@" + pod + "@" + model, Sequence: seq, Payload: payload})
		seq++
		evs = nil
	}
	// held counts how many leading blocks of toks llm-d says pod holds.
	held := func(toks []int32) int {
		u := make([]uint32, len(toks))
		for i, t := range toks {
			u[i] = uint32(t)
		}
		keys, err := tp.TokensToKVBlockKeys(kvblock.EmptyBlockHash, u, model, nil)
		check(err)
		res, err := index.Lookup(ctx, keys, nil)
		check(err)
		n := 0
		for _, k := range keys {
			found := false
			for _, e := range res[k] {
				found = found || e.PodIdentifier == pod
			}
			if !found {
				break
			}
			n++
		}
		return n
	}
	wait := func(toks []int32, want int) {
		for i := 0; i < 100 && held(toks) != want; i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if got := held(toks); got != want {
			fmt.Printf("FAIL: llm-d sees %d blocks of the prefix, want %d\n", got, want)
			os.Exit(1)
		}
		fmt.Printf("ok: llm-d sees %d blocks\n", want)
	}
	prefill := func(id string, toks []int32) {
		n := len(toks) - kp.CachedPrefix(toks)
		a, ok := kp.Allocate(id, toks, n)
		if !ok {
			panic("refused")
		}
		check(kp.Commit(id, toks[a.Cached:]))
	}
	mk := func(base, n int) []int32 {
		t := make([]int32, n)
		for i := range t {
			t[i] = int32(base + i)
		}
		return t
	}
	a := mk(100, 50) // 3 full blocks
	prefill("a", a)
	flush()
	wait(a, 3)
	// b shares a's first 2 blocks, then 2 of its own: stored with a parent.
	b := append(append([]int32(nil), a[:32]...), mk(5000, 33)...)
	prefill("b", b)
	flush()
	wait(b, 4)
	kp.Free("a")
	kp.Free("b")
	// c needs 5 blocks of 6: evicts cached ones (later blocks first).
	c := mk(9000, 127)
	prefill("c", c)
	flush()
	wait(c, 7)
	wait(a, 0) // every cached block was evicted for c
	wait(b, 0)
	kp.Free("c")
	if !kp.ResetPrefixCache() {
		panic("reset refused")
	}
	flush()
	wait(c, 0)
	fmt.Println("all ok")
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
