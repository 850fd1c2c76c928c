package kvcache

import (
	"slices"
	"strings"
	"testing"
)

func mustPool(t *testing.T, blocks, size int) *Pool {
	t.Helper()
	p, err := New(blocks, size)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// prefill allocates and commits all of tokens for a new sequence.
func prefill(t *testing.T, p *Pool, id string, tokens []int32) Alloc {
	t.Helper()
	n := len(tokens) - p.CachedPrefix(tokens)
	a, ok := p.Allocate(id, tokens, n)
	if !ok {
		t.Fatalf("Allocate(%s, %d tokens) refused with %d free", id, len(tokens), p.NumFree())
	}
	if err := p.Commit(id, tokens[a.Cached:]); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNewRejectsBadSizes(t *testing.T) {
	for _, c := range [][2]int{{0, 16}, {4, 0}, {-1, 4}} {
		if _, err := New(c[0], c[1]); err == nil || !strings.HasPrefix(err.Error(), "kvcache: ") {
			t.Errorf("New(%d, %d): err %v", c[0], c[1], err)
		}
	}
}

func TestPrefixHit(t *testing.T) {
	cases := []struct {
		name       string
		first, use []int32
		cached     int
	}{
		{"same prompt: all but the last block's worth", []int32{1, 2, 3, 4, 5, 6, 7, 8}, []int32{1, 2, 3, 4, 5, 6, 7, 8}, 4},
		{"longer prompt reuses both blocks", []int32{1, 2, 3, 4, 5, 6, 7, 8}, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 8},
		{"diverges in block 2", []int32{1, 2, 3, 4, 5, 6, 7, 8}, []int32{1, 2, 3, 4, 5, 0, 7, 8, 9}, 4},
		{"diverges in block 1", []int32{1, 2, 3, 4, 5, 6, 7, 8}, []int32{0, 2, 3, 4, 5, 6, 7, 8, 9}, 0},
		{"partial block is copied", []int32{1, 2, 3, 4, 5, 6}, []int32{1, 2, 3, 4, 5, 6, 7}, 6},
		{"partial block, in part", []int32{1, 2, 3, 4, 5, 6, 7}, []int32{1, 2, 3, 4, 5, 0, 7}, 5},
		{"partial first block", []int32{1, 2, 3}, []int32{1, 2, 9}, 2},
		{"partial block, other parent", []int32{1, 2, 3, 4, 5, 6}, []int32{0, 2, 3, 4, 5, 6, 7}, 0},
		{"same block, other parent", []int32{1, 2, 3, 4, 5, 6, 7, 8}, []int32{5, 6, 7, 8, 1}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPool(t, 8, 4)
			prefill(t, p, "a", tc.first)
			if got := p.CachedPrefix(tc.use); got != tc.cached {
				t.Fatalf("CachedPrefix = %d, want %d", got, tc.cached)
			}
			a := prefill(t, p, "b", tc.use)
			if a.Cached != tc.cached {
				t.Fatalf("Alloc.Cached = %d, want %d", a.Cached, tc.cached)
			}
			ta, tb := p.Table("a"), p.Table("b")
			for j := 0; j < tc.cached/4; j++ {
				if ta[j] != tb[j] {
					t.Errorf("block %d: a has %d, b has %d; want shared", j, ta[j], tb[j])
				}
			}
			// a's partial block is copied into a block of b's own.
			var copies []Copy
			if j := tc.cached / 4; tc.cached%4 != 0 {
				copies = []Copy{{Src: ta[j], Dst: tb[j]}}
			}
			if !slices.Equal(a.Copies, copies) {
				t.Errorf("copies %v, want %v", a.Copies, copies)
			}
			s := p.Stats()
			if s.PrefixQueries != int64(len(tc.first)+len(tc.use)) || s.PrefixHits != int64(tc.cached) {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

func TestFreedBlocksStayCachedUntilEvicted(t *testing.T) {
	p := mustPool(t, 4, 2)
	prefill(t, p, "a", []int32{1, 2, 3, 4, 5}) // blocks for [1 2] [3 4] [5]
	p.Free("a")
	if s := p.Stats(); s.Free != 4 || s.CachedBlocks != 2 || s.Usage() != 0 {
		t.Fatalf("after free: %+v", s)
	}
	if got := p.CachedPrefix([]int32{1, 2, 3, 4, 9}); got != 4 {
		t.Fatalf("freed blocks not found: cached %d, want 4", got)
	}
	// Two uncached blocks go first; the third allocation evicts [3 4]
	// (the sequence's later block) before [1 2].
	prefill(t, p, "b", []int32{7, 7, 7, 7, 7})
	if s := p.Stats(); s.Evictions != 1 || s.CachedBlocks != 3 {
		t.Fatalf("after b: %+v", s)
	}
	if got := p.CachedPrefix([]int32{1, 2, 3, 4, 9}); got != 2 {
		t.Fatalf("cached %d, want 2 ([1 2] survives, [3 4] evicted)", got)
	}
}

func TestCopyOnWriteAfterFork(t *testing.T) {
	p := mustPool(t, 6, 4)
	prefill(t, p, "a", []int32{1, 2, 3, 4, 5, 6})
	if err := p.Fork("a", "b"); err != nil {
		t.Fatal(err)
	}
	ta := p.Table("a")
	if !slices.Equal(ta, p.Table("b")) {
		t.Fatalf("fork tables differ: %v %v", ta, p.Table("b"))
	}
	// a writes token 6 into the shared partial block: it gets a copy.
	need, ok := p.CanAllocate("a", nil, 1)
	if need != 1 || !ok {
		t.Fatalf("CanAllocate = %d, %v; want 1 (the copy)", need, ok)
	}
	al, _ := p.Allocate("a", nil, 1)
	ta2 := p.Table("a")
	if len(al.Copies) != 1 || al.Copies[0] != (Copy{Src: ta[1], Dst: ta2[1]}) || ta2[0] != ta[0] || ta2[1] == ta[1] {
		t.Fatalf("copies %v, table %v -> %v", al.Copies, ta, ta2)
	}
	if err := p.Commit("a", []int32{7}); err != nil {
		t.Fatal(err)
	}
	// b now holds the old partial block alone and writes it in place.
	if al, _ := p.Allocate("b", nil, 1); len(al.Copies) != 0 {
		t.Fatalf("b copies %v; it is the only holder now", al.Copies)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCommitRefusesSharedOrIndexedWrites(t *testing.T) {
	p := mustPool(t, 6, 4)
	prefill(t, p, "a", []int32{1, 2, 3, 4, 5, 6})
	if err := p.Fork("a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := p.Commit("a", []int32{7}); err == nil {
		t.Fatal("commit into a shared block without Allocate: no error")
	}
	if err := p.Commit("zz", []int32{7}); err == nil {
		t.Fatal("commit to an unknown sequence: no error")
	}
	if err := p.Commit("a", []int32{7, 8, 9}); err == nil {
		t.Fatal("commit past the allocated slots: no error")
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestTruncateIntoIndexedBlock(t *testing.T) {
	p := mustPool(t, 6, 4)
	prefill(t, p, "a", []int32{1, 2, 3, 4, 5, 6, 7, 8, 9})
	if err := p.Truncate("a", 2); err != nil {
		t.Fatal(err)
	}
	if got := len(p.Table("a")); got != 1 {
		t.Fatalf("table has %d blocks after truncating to 2 tokens", got)
	}
	// Block [1 2 3 4] is still indexed; writing token 2 takes it out.
	if got := p.CachedPrefix([]int32{1, 2, 3, 4, 0}); got != 4 {
		t.Fatalf("cached %d before the write, want 4", got)
	}
	if _, ok := p.Allocate("a", nil, 1); !ok {
		t.Fatal("refused")
	}
	if err := p.Commit("a", []int32{0}); err != nil {
		t.Fatal(err)
	}
	// The block holds [1 2 0] now: a partial block that serves [1 2].
	if got := p.CachedPrefix([]int32{1, 2, 3, 4, 0}); got != 2 {
		t.Fatalf("cached %d after overwriting the block, want 2", got)
	}
	for _, n := range []int{-1, 4} {
		if err := p.Truncate("a", n); err == nil {
			t.Errorf("Truncate to %d of 3 tokens: no error", n)
		}
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestDuplicateContentsIndexedOnce(t *testing.T) {
	p := mustPool(t, 8, 2)
	toks := []int32{1, 2, 3, 4, 5}
	// Both allocate before either commits, as two requests prefilling in one step.
	for _, id := range []string{"a", "b"} {
		if _, ok := p.Allocate(id, toks, 5); !ok {
			t.Fatal("refused")
		}
	}
	for _, id := range []string{"a", "b"} {
		if err := p.Commit(id, toks); err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(); s.CachedBlocks != 2 {
		t.Fatalf("%d cached blocks, want 2", s.CachedBlocks)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestHashCollisionIsAMiss forges an index entry whose hash matches but
// whose tokens do not: a lookup must not take it.
func TestHashCollisionIsAMiss(t *testing.T) {
	p := mustPool(t, 4, 2)
	prefill(t, p, "a", []int32{1, 2, 3})
	b := p.index[hashBlock(rootHash, []int32{1, 2})]
	p.blocks[b].tokens = []int32{9, 9} // as if [9 9] had hashed like [1 2]
	if got := p.CachedPrefix([]int32{1, 2, 3}); got != 0 {
		t.Fatalf("collision taken as a hit: cached %d", got)
	}
	p.blocks[b].tokens = []int32{1, 2}
	p.blocks[b].parent++
	if got := p.CachedPrefix([]int32{1, 2, 3}); got != 0 {
		t.Fatalf("other parent taken as a hit: cached %d", got)
	}
}

func TestAllocateRefusalChangesNothing(t *testing.T) {
	p := mustPool(t, 3, 2)
	prefill(t, p, "a", []int32{1, 2, 3, 4})
	need, ok := p.CanAllocate("b", []int32{5, 6, 7, 8, 9}, 5)
	if ok || need != 3 {
		t.Fatalf("CanAllocate = %d, %v; want 3, false", need, ok)
	}
	if _, ok := p.Allocate("b", []int32{5, 6, 7, 8, 9}, 5); ok || p.Has("b") || p.NumFree() != 1 {
		t.Fatal("refused Allocate changed the pool")
	}
	if _, ok := p.Allocate("a", nil, -1); ok {
		t.Fatal("negative n accepted")
	}
}

func TestDisablePrefixCache(t *testing.T) {
	p := mustPool(t, 8, 4)
	p.DisablePrefixCache()
	tokens := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	prefill(t, p, "a", tokens)
	if got := p.CachedPrefix(tokens); got != 0 {
		t.Fatalf("CachedPrefix = %d with the cache off, want 0", got)
	}
	if a := prefill(t, p, "b", tokens); a.Cached != 0 {
		t.Fatalf("Alloc.Cached = %d with the cache off, want 0", a.Cached)
	}
	if s := p.Stats(); s.PrefixHits != 0 || p.NumFree() != 2 {
		t.Fatalf("stats %+v, %d free; want no hits and 3+3 blocks held", s, p.NumFree())
	}
}

// TestPartialBlocksFreed: a freed sequence's partial block stays listed
// unless another listed block after the same parent holds its tokens and
// more (then it goes to the free list's front, reusable first); lookups
// find the longest, and a listed block that is taken leaves the list.
func TestPartialBlocksFreed(t *testing.T) {
	p := mustPool(t, 6, 4)
	prefill(t, p, "a", []int32{1, 2, 3, 4, 5, 6})
	prefill(t, p, "b", []int32{1, 2, 3, 4, 5, 6, 7}) // copies a's [5 6], computes 7
	prefill(t, p, "c", []int32{1, 2, 3, 4, 5, 8})    // copies a's [5], computes 8
	ta, tb, tc := p.Table("a"), p.Table("b"), p.Table("c")
	p.Free("a") // [5 6] is a prefix of b's [5 6 7]: dropped
	p.Free("b")
	p.Free("c") // [5 8]: kept
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	listed := func(b int32) bool { return p.blocks[b].partial }
	if listed(ta[1]) || !listed(tb[1]) || !listed(tc[1]) {
		t.Fatalf("listed after the frees: a's %v, b's %v, c's %v; want b's and c's", listed(ta[1]), listed(tb[1]), listed(tc[1]))
	}
	if p.free.head != ta[1] {
		t.Errorf("free list front is block %d, want a's dropped partial block %d", p.free.head, ta[1])
	}
	if got := p.CachedPrefix([]int32{1, 2, 3, 4, 5, 6, 7, 9}); got != 7 {
		t.Errorf("cached %d of a sequence extending b, want 7", got)
	}
	// Take every free block: the listed ones leave the list, and d's own
	// last block (3 tokens) is the only one listed.
	prefill(t, p, "d", slices.Repeat([]int32{9}, 6*4-1))
	if td := p.Table("d"); len(p.partials) != 1 || !listed(td[5]) || p.CachedPrefix([]int32{1, 2, 3, 4, 5, 6, 7, 9}) != 0 {
		t.Errorf("partial lists %v after every block was taken by d (table %v)", p.partials, td)
	}
}
