package kvevents

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"kiln/kvcache"
)

// consume decodes a payload the way llm-d-kv-cache v0.9.0's VLLMAdapter
// does (engineadapter/vllm_adapter.go: the same msgpack library, the
// batch as a positional struct, each event decoded into interface values
// and checked field by field, hashes accepted only as uint64, int64 or
// bytes) and flattens its events back to one kvcache.Event per block.
// It fails wherever llm-d would reject the message.
func consume(payload []byte) (ts float64, events []kvcache.Event, err error) {
	var batch struct {
		_                struct{} `msgpack:",array"`
		TS               float64
		Events           []msgpack.RawMessage
		DataParallelRank *int `msgpack:",omitempty"`
	}
	if err := msgpack.Unmarshal(payload, &batch); err != nil {
		return 0, nil, fmt.Errorf("batch: %w", err)
	}
	for i, raw := range batch.Events {
		var decoded any
		if err := msgpack.Unmarshal(raw, &decoded); err != nil {
			return 0, nil, fmt.Errorf("event %d: %w", i, err)
		}
		fields, ok := decoded.([]any)
		if !ok || len(fields) < 1 {
			return 0, nil, fmt.Errorf("event %d: %T, want a tagged array", i, decoded)
		}
		switch tag := fields[0]; tag {
		case "BlockStored":
			if len(fields) < 5 {
				return 0, nil, fmt.Errorf("event %d: BlockStored with %d fields", i, len(fields))
			}
			hashes, err := hashList(fields[1])
			if err != nil {
				return 0, nil, err
			}
			var parent uint64
			if fields[2] != nil {
				if parent, err = hash(fields[2]); err != nil {
					return 0, nil, err
				}
			}
			rawTokens, ok := fields[3].([]any)
			if !ok {
				return 0, nil, fmt.Errorf("token_ids %T", fields[3])
			}
			tokens := make([]int32, len(rawTokens))
			for j, v := range rawTokens {
				n, err := integer(v)
				if err != nil || n < 0 || n > math.MaxInt32 {
					return 0, nil, fmt.Errorf("token_ids[%d] %v %v", j, v, err)
				}
				tokens[j] = int32(n)
			}
			bs, err := integer(fields[4])
			if err != nil || bs <= 0 || len(tokens) != len(hashes)*int(bs) {
				return 0, nil, fmt.Errorf("%d tokens for %d blocks of %v (%v)", len(tokens), len(hashes), fields[4], err)
			}
			if len(fields) > 5 && fields[5] != nil {
				return 0, nil, fmt.Errorf("lora_id %v", fields[5])
			}
			if len(fields) > 6 && fields[6] != Medium {
				return 0, nil, fmt.Errorf("medium %v", fields[6])
			}
			for j, h := range hashes {
				e := kvcache.Event{Kind: kvcache.BlockStored, Hash: h, Tokens: tokens[j*int(bs) : (j+1)*int(bs)]}
				if j > 0 {
					e.Parent, e.HasParent = hashes[j-1], true
				} else if fields[2] != nil {
					e.Parent, e.HasParent = parent, true
				}
				events = append(events, e)
			}
		case "BlockRemoved":
			if len(fields) < 2 {
				return 0, nil, fmt.Errorf("event %d: BlockRemoved with %d fields", i, len(fields))
			}
			hashes, err := hashList(fields[1])
			if err != nil {
				return 0, nil, err
			}
			if len(fields) > 2 && fields[2] != Medium {
				return 0, nil, fmt.Errorf("medium %v", fields[2])
			}
			for _, h := range hashes {
				events = append(events, kvcache.Event{Kind: kvcache.BlockRemoved, Hash: h})
			}
		case "AllBlocksCleared":
			events = append(events, kvcache.Event{Kind: kvcache.AllBlocksCleared})
		default:
			return 0, nil, fmt.Errorf("event %d: tag %v", i, tag)
		}
	}
	return batch.TS, events, nil
}

func hashList(v any) ([]uint64, error) {
	raw, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("block_hashes %T", v)
	}
	hs := make([]uint64, len(raw))
	for i, r := range raw {
		h, err := hash(r)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	return hs, nil
}

// hash accepts what llm-d's getHashAsUint64 accepts (bytes aside: kiln
// never sends them).
func hash(v any) (uint64, error) {
	switch h := v.(type) {
	case uint64:
		return h, nil
	case int64:
		return uint64(h), nil
	}
	return 0, fmt.Errorf("hash of type %T: llm-d rejects it", v)
}

// integer accepts what llm-d's toInt accepts.
func integer(v any) (int64, error) {
	switch n := v.(type) {
	case int8:
		return int64(n), nil
	case int16:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case int64:
		return n, nil
	case uint8:
		return int64(n), nil
	case uint16:
		return int64(n), nil
	case uint32:
		return int64(n), nil
	case uint64:
		return int64(n), nil
	}
	return 0, fmt.Errorf("number of type %T", v)
}

// eventsFrom turns fuzz bytes into a plausible event stream over blocks
// of bs tokens: chains that continue or restart, removals, clears, with
// small and large hashes and token ids.
func eventsFrom(data []byte, bs int) []kvcache.Event {
	next := func() uint64 {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return uint64(b)
	}
	var events []kvcache.Event
	var last uint64
	for len(data) > 0 {
		op, h := next(), next()*0x9e3779b97f4a7c15+next()
		switch op % 6 {
		case 0, 1, 2:
			e := kvcache.Event{Kind: kvcache.BlockStored, Hash: h, Tokens: make([]int32, bs)}
			for i := range e.Tokens {
				e.Tokens[i] = int32(next() << (next() % 24))
			}
			switch op % 3 {
			case 0: // continues the last block
				e.Parent, e.HasParent = last, len(events) > 0
			case 1: // some other parent
				e.Parent, e.HasParent = next(), true
			}
			last = h
			events = append(events, e)
		case 3, 4:
			events = append(events, kvcache.Event{Kind: kvcache.BlockRemoved, Hash: h})
		case 5:
			events = append(events, kvcache.Event{Kind: kvcache.AllBlocksCleared})
		}
	}
	return events
}

// roundTrip checks that llm-d's reading of a batch gives back exactly the
// events encoded.
func roundTrip(t *testing.T, ts float64, events []kvcache.Event, bs int) {
	t.Helper()
	payload, err := AppendBatch(nil, ts, events, bs)
	if err != nil {
		t.Fatal(err)
	}
	gotTS, got, err := consume(payload)
	if err != nil {
		t.Fatalf("llm-d would reject %x: %v", payload, err)
	}
	if gotTS != ts {
		t.Errorf("ts %v, want %v", gotTS, ts)
	}
	eq := func(a, b kvcache.Event) bool {
		return a.Kind == b.Kind && a.Hash == b.Hash && a.HasParent == b.HasParent &&
			(!a.HasParent || a.Parent == b.Parent) && slices.Equal(a.Tokens, b.Tokens)
	}
	if !slices.EqualFunc(got, events, eq) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, events)
	}
}

func TestConsumerRoundTrip(t *testing.T) {
	roundTrip(t, 1764154800.25, nil, 16)
	for seed := range 200 {
		data := make([]byte, 40+seed*3)
		for i := range data {
			data[i] = byte(uint32(i*seed+i*i*7+seed) >> 2)
		}
		bs := 1 + seed%32
		roundTrip(t, float64(seed)*1e6+0.5, eventsFrom(data, bs), bs)
	}
}

func FuzzBatch(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5}, uint8(2))
	f.Add([]byte{0, 9, 9, 1, 1, 0, 9, 8, 3, 3, 4, 4, 1, 5, 5, 5, 0, 2, 2, 2, 2}, uint8(16))
	f.Fuzz(func(t *testing.T, data []byte, bs uint8) {
		if bs == 0 {
			bs = 1
		}
		roundTrip(t, 42, eventsFrom(data, int(bs)), int(bs))
	})
}
