package kvcache

import (
	"slices"
	"testing"
)

// TestEventsChainAndEvict follows one sequence's blocks through the
// events: stored with the parent chain, removed when evicted, cleared on
// reset.
func TestEventsChainAndEvict(t *testing.T) {
	p := mustPool(t, 3, 2)
	var got []Event
	p.SetObserver(func(e Event) {
		e.Tokens = slices.Clone(e.Tokens)
		got = append(got, e)
	})
	prefill(t, p, "a", []int32{1, 2, 3, 4, 5}) // blocks [1 2] [3 4] [5]
	if len(got) != 2 {
		t.Fatalf("events after a 5-token prefill in blocks of 2: %+v", got)
	}
	h0, h1 := hashBlock(rootHash, []int32{1, 2}), hashBlock(hashBlock(rootHash, []int32{1, 2}), []int32{3, 4})
	want := []Event{
		{Kind: BlockStored, Hash: h0, Tokens: []int32{1, 2}},
		{Kind: BlockStored, Hash: h1, Parent: h0, HasParent: true, Tokens: []int32{3, 4}},
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Hash != want[i].Hash || got[i].Parent != want[i].Parent ||
			got[i].HasParent != want[i].HasParent || !slices.Equal(got[i].Tokens, want[i].Tokens) {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if p.ResetPrefixCache() {
		t.Fatal("ResetPrefixCache succeeded while a sequence holds blocks")
	}
	p.Free("a")
	got = nil
	prefill(t, p, "b", []int32{9, 9, 9, 9, 9}) // three new blocks: evicts both cached ones, later block first
	var removed []uint64
	for _, e := range got {
		if e.Kind == BlockRemoved {
			removed = append(removed, e.Hash)
		}
	}
	if !slices.Equal(removed, []uint64{h1, h0}) {
		t.Errorf("removed %x, want %x (the later block first)", removed, []uint64{h1, h0})
	}
	p.Free("b")
	got = nil
	if !p.ResetPrefixCache() || len(got) != 1 || got[0].Kind != AllBlocksCleared || p.Stats().CachedBlocks != 0 {
		t.Errorf("reset: events %+v, %d blocks still cached", got, p.Stats().CachedBlocks)
	}
	if a := prefill(t, p, "c", []int32{9, 9, 9}); a.Cached != 0 {
		t.Errorf("after a reset, %d tokens came from the cache", a.Cached)
	}
}

// TestNoObserverNoAllocations: events cost nothing when nobody listens;
// a decode step that fills no block allocates nothing either way.
func TestNoObserverNoAllocations(t *testing.T) {
	p := mustPool(t, 64, 4)
	prefill(t, p, "a", []int32{1, 2, 3, 4, 5})
	toks := []int32{1, 2, 3, 4, 5}
	allocs := testing.AllocsPerRun(100, func() {
		// Fill a block and take it back: Commit indexes it (the clone of its
		// tokens is the pool's own), Truncate + Allocate unindex it.
		if _, ok := p.Allocate("a", toks, 3); !ok {
			t.Fatal("allocate refused")
		}
		if err := p.Commit("a", []int32{6, 7, 8}); err != nil {
			t.Fatal(err)
		}
		if err := p.Truncate("a", 5); err != nil {
			t.Fatal(err)
		}
	})
	p.SetObserver(func(Event) {})
	withObserver := testing.AllocsPerRun(100, func() {
		if _, ok := p.Allocate("a", toks, 3); !ok {
			t.Fatal("allocate refused")
		}
		if err := p.Commit("a", []int32{6, 7, 8}); err != nil {
			t.Fatal(err)
		}
		if err := p.Truncate("a", 5); err != nil {
			t.Fatal(err)
		}
	})
	if withObserver != allocs {
		t.Errorf("an observer that keeps nothing changed allocations per step from %v to %v", allocs, withObserver)
	}
}
