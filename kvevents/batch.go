package kvevents

import (
	"fmt"

	"kiln/kvcache"
)

// Medium is the device tier every event names (vLLM's "GPU"; llm-d
// lower-cases it): kiln's KV lives in one store.
const Medium = "GPU"

// AppendBatch appends the msgpack EventBatch [ts, events, nil] of the package
// comment to dst: ts in seconds since the Unix epoch, blockSize the pool's
// tokens per block. Consecutive BlockStored events that chain (each one's
// parent is the previous one's hash) are merged into one event, as vLLM
// sends a request's new blocks; BlockRemoved events in a row likewise. It
// fails on an event of unknown kind, a BlockStored whose tokens are not
// blockSize long, or a negative token id.
func AppendBatch(dst []byte, ts float64, events []kvcache.Event, blockSize int) ([]byte, error) {
	if blockSize <= 0 {
		return dst, fmt.Errorf("kvevents: block size %d", blockSize)
	}
	for i, e := range events {
		switch e.Kind {
		case kvcache.BlockStored:
			if len(e.Tokens) != blockSize {
				return dst, fmt.Errorf("kvevents: event %d: BlockStored with %d tokens in blocks of %d", i, len(e.Tokens), blockSize)
			}
			for _, t := range e.Tokens {
				if t < 0 {
					return dst, fmt.Errorf("kvevents: event %d: token id %d", i, t)
				}
			}
		case kvcache.BlockRemoved, kvcache.AllBlocksCleared:
		default:
			return dst, fmt.Errorf("kvevents: event %d of unknown kind %d", i, e.Kind)
		}
	}
	runs := groups(events)
	dst = appendArrayHeader(dst, 3)
	dst = appendFloat64(dst, ts)
	dst = appendArrayHeader(dst, len(runs))
	for _, r := range runs {
		run := events[r[0]:r[1]]
		switch run[0].Kind {
		case kvcache.BlockStored:
			dst = appendArrayHeader(dst, 7)
			dst = appendString(dst, "BlockStored")
			dst = appendArrayHeader(dst, len(run))
			for _, e := range run {
				dst = appendHash(dst, e.Hash)
			}
			if run[0].HasParent {
				dst = appendHash(dst, run[0].Parent)
			} else {
				dst = appendNil(dst)
			}
			dst = appendArrayHeader(dst, len(run)*blockSize)
			for _, e := range run {
				for _, t := range e.Tokens {
					dst = appendUint(dst, uint64(t))
				}
			}
			dst = appendUint(dst, uint64(blockSize))
			dst = appendNil(dst) // lora_id
			dst = appendString(dst, Medium)
		case kvcache.BlockRemoved:
			dst = appendArrayHeader(dst, 3)
			dst = appendString(dst, "BlockRemoved")
			dst = appendArrayHeader(dst, len(run))
			for _, e := range run {
				dst = appendHash(dst, e.Hash)
			}
			dst = appendString(dst, Medium)
		case kvcache.AllBlocksCleared:
			dst = appendArrayHeader(dst, 1)
			dst = appendString(dst, "AllBlocksCleared")
		}
	}
	return appendNil(dst), nil // data_parallel_rank
}

// groups splits events into runs [lo, hi) that encode as one wire event:
// chained BlockStored events, BlockRemoved events in a row, or a single
// AllBlocksCleared.
func groups(events []kvcache.Event) [][2]int {
	var runs [][2]int
	for lo := 0; lo < len(events); {
		hi := lo + 1
		for hi < len(events) && joins(events[hi-1], events[hi]) {
			hi++
		}
		runs = append(runs, [2]int{lo, hi})
		lo = hi
	}
	return runs
}

func joins(prev, e kvcache.Event) bool {
	switch {
	case prev.Kind == kvcache.BlockStored && e.Kind == kvcache.BlockStored:
		return e.HasParent && e.Parent == prev.Hash
	case prev.Kind == kvcache.BlockRemoved && e.Kind == kvcache.BlockRemoved:
		return true
	}
	return false
}
