package sched

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"kiln/kvcache"
)

// drive interprets data as a workload (config, then add / step / abort
// operations) and checks after every step that the plan respects the
// budgets, that no shared block is written, that the pool's invariants
// hold (Check: no leak, ref counts = tables holding each block, index only
// on full blocks of matching tokens), and, through a shadow KV store that
// applies the plan's copies and writes, that every running request reads
// back exactly its own tokens. At the end every request must finish and
// every block come back. With speculation (data[3] >= 128) random
// drafts are stored after each step (SetDrafts) and each step accepts a random number of them: the
// rejected ones' KV must be rolled back (tables of exactly the committed
// tokens' blocks after each step).
func drive(t testing.TB, data []byte) {
	if len(data) < 5 {
		return
	}
	blockSize := 1 + int(data[3]%4)
	speculate := data[3] >= 128
	numBlocks := 2 + int(data[2]%11)
	cfg := Config{MaxBatchedTokens: 1 + int(data[0]%24), MaxSeqs: 1 + int(data[1]%5), MaxModelLen: 4 + int(data[4]%37)}
	data = data[5:]
	pool, err := kvcache.New(numBlocks, blockSize)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	kv := make([][]int32, numBlocks) // [block][slot] token id whose KV the slot holds
	for b := range kv {
		kv[b] = slices.Repeat([]int32{-1}, blockSize)
	}
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nconfig %+v, %d blocks of %d\nlog:\n%v", fmt.Sprintf(format, args...), cfg, numBlocks, blockSize, log)
	}
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	// propose plays the engine's drafting stage after a step's Update:
	// random drafts, sometimes longer than Max (the scheduler cuts them).
	propose := func() {
		asks := s.DraftAsks(nil)
		for i := range asks {
			a := &asks[i]
			if a.Max <= 0 {
				fail("%s: asked for a draft of at most %d tokens", a.ID, a.Max)
			}
			if need := (len(a.Tokens) - 1 + s.pool.BlockSize() - 1) / s.pool.BlockSize(); len(a.Table) < need {
				fail("%s: ask's table of %d blocks does not cover its %d committed tokens", a.ID, len(a.Table), len(a.Tokens)-1)
			}
			a.Draft = make([]int32, next()%6)
			for j := range a.Draft {
				a.Draft[j] = int32(next() % 4)
			}
		}
		s.SetDrafts(asks)
	}
	stems := [][]int32{{1, 2, 1, 2, 1, 2, 1, 2, 1, 2}, {3, 1, 3, 1, 3, 1, 3}}
	ids := 0
	searches := map[string][]string{} // beam search root -> its live members
	known := map[string]bool{}        // every id the scheduler took: requests, their forks, branches

	// rounds plays the engine's part in beam search: once every member of
	// a search is held, each continues with 0 to 2 tokens (the extras as
	// branches, as the width allows) or is pruned; a search whose members
	// reached their length limit, or that keeps none, ends.
	rounds := func() {
		t.Helper()
	search:
		for _, root := range slices.Sorted(maps.Keys(searches)) {
			members := searches[root]
			full := false
			for _, id := range members {
				r := s.byID[id]
				if r == nil || !r.held {
					continue search
				}
				full = full || len(r.tokens) >= r.maxLen
			}
			var next2 []string
			for _, id := range members {
				k := next() % 3
				if full {
					k = 0
				}
				for j := 1; j < k; j++ {
					child := fmt.Sprintf("%s.b%d", root, ids)
					ids++
					if err := s.Branch(id, child, int32(next()%4)); err == nil {
						next2 = append(next2, child)
						known[child] = true
					}
				}
				if k == 0 {
					s.Abort(id)
					continue
				}
				if err := s.Continue(id, int32(next()%4)); err != nil {
					fail("continue %s: %v", id, err)
				}
				next2 = append(next2, id)
			}
			log = append(log, fmt.Sprintf("round %s: %v -> %v", root, members, next2))
			if len(next2) == 0 {
				delete(searches, root)
			} else {
				searches[root] = next2
			}
		}
	}

	step := func() {
		t.Helper()
		plan := s.Schedule()
		log = append(log, fmt.Sprintf("step %d: %d seqs %d tokens preempted %v copies %v", plan.Step, len(plan.Seqs), plan.NumTokens, plan.Preempted, plan.Copies))
		if plan.NumTokens > cfg.MaxBatchedTokens || len(plan.Seqs) > cfg.MaxSeqs || s.NumRunning() > cfg.MaxSeqs {
			fail("step over budget: %d tokens, %d seqs, %d running", plan.NumTokens, len(plan.Seqs), s.NumRunning())
		}
		holders := map[int32]int{}
		for _, r := range s.running {
			for _, b := range pool.Table(r.ID) {
				holders[b]++
			}
		}
		for _, c := range plan.Copies {
			copy(kv[c.Dst], kv[c.Src])
		}
		written := map[int32]string{}
		sampled := make([]int32, len(plan.Seqs)+len(plan.Forks))
		accepted := make([]int32, len(plan.Seqs))
		for j, f := range plan.Forks {
			if !plan.Seqs[f.Seq].Sample || s.forkOf[f.ID] == nil || s.forkOf[f.ID].ID != plan.Seqs[f.Seq].ID {
				fail("fork %+v of a sequence that does not end its parent's prompt", f)
			}
			sampled[len(plan.Seqs)+j] = int32(next() % 4)
		}
		for i, q := range plan.Seqs {
			r := s.byID[q.ID]
			if r == nil || !r.running || q.Start != pool.Len(q.ID) || !slices.Equal(q.Table, pool.Table(q.ID)) {
				fail("plan entry %+v does not match the request or the pool", q)
			}
			known := q.Tokens[:len(q.Tokens)-q.Draft]
			if len(known) == 0 || !slices.Equal(known, r.tokens[q.Start:q.Start+len(known)]) {
				fail("plan entry %s has tokens %v at %d; request has %v", q.ID, q.Tokens, q.Start, r.tokens)
			}
			if q.Draft > 0 {
				if !speculate || !q.Sample || len(known) != 1 || r.Beam || q.Start < len(r.Prompt) || len(r.tokens)+q.Draft >= r.maxLen ||
					slices.ContainsFunc(q.Tokens[1:], func(t int32) bool { return slices.Contains(r.Stop, t) }) {
					fail("plan entry %+v drafts wrongly for %s (tokens %v, max len %d, stop %v)", q, q.ID, r.tokens, r.maxLen, r.Stop)
				}
				accepted[i] = int32(next() % (q.Draft + 1))
			}
			for k, tok := range q.Tokens {
				pos := q.Start + k
				b := q.Table[pos/blockSize]
				if holders[b] != 1 {
					fail("%s writes position %d into block %d held by %d tables", q.ID, pos, b, holders[b])
				}
				if w, ok := written[b]; ok && w != q.ID {
					fail("%s and %s both write block %d in one step", w, q.ID, b)
				}
				written[b] = q.ID
				kv[b][pos%blockSize] = tok
			}
			sampled[i] = int32(next() % 4)
		}
		if _, err := s.UpdateDrafts(plan, sampled, accepted); err != nil {
			fail("%v", err)
		}
		log = append(log, fmt.Sprintf("  accepted %v", accepted))
		for _, r := range s.running {
			if n := len(pool.TableView(r.ID)); n != pool.BlocksFor(pool.Len(r.ID)) {
				fail("%s holds %d blocks for %d committed tokens", r.ID, n, pool.Len(r.ID))
			}
		}
		rounds()
		if speculate {
			propose()
		}
		if err := pool.Check(); err != nil {
			fail("%v", err)
		}
		for _, r := range s.running {
			table := pool.Table(r.ID)
			for pos := 0; pos < pool.Len(r.ID); pos++ {
				if got := kv[table[pos/blockSize]][pos%blockSize]; got != r.tokens[pos] {
					fail("%s position %d: KV holds token %d, want %d", r.ID, pos, got, r.tokens[pos])
				}
			}
		}
	}

	for len(data) > 0 {
		switch op := next() % 6; op {
		case 0, 1:
			stem := stems[next()%len(stems)]
			prompt := slices.Clone(stem[:next()%(len(stem)+1)])
			for range next() % 8 {
				prompt = append(prompt, int32(next()%4))
			}
			req := Request{ID: fmt.Sprintf("r%d", ids), Prompt: prompt, MaxTokens: next() % 9, Priority: next() % 3}
			if next()%2 == 0 {
				req.Stop = []int32{3}
			}
			if w := next() % 4; w > 0 && w <= cfg.MaxSeqs && next()%2 == 0 {
				req.Beam, req.Width = true, w
			} else {
				for f := range next() % 3 {
					req.Forks = append(req.Forks, fmt.Sprintf("%s.%d", req.ID, f+1))
				}
			}
			ids++
			err := s.Add(req)
			log = append(log, fmt.Sprintf("add %s prompt %v max %d prio %d forks %v beam %d: %v", req.ID, prompt, req.MaxTokens, req.Priority, req.Forks, req.Width, err))
			if err == nil && req.Beam {
				searches[req.ID] = []string{req.ID}
			}
			if err == nil {
				known[req.ID] = true
				for _, f := range req.Forks {
					known[f] = true
				}
			}
			if err == nil && (len(prompt) >= cfg.MaxModelLen || len(prompt) >= numBlocks*blockSize) {
				fail("accepted a prompt of %d tokens that cannot fit", len(prompt))
			}
			if err != nil && len(prompt) > 0 && len(prompt) < min(cfg.MaxModelLen, numBlocks*blockSize) && 1+len(req.Forks) <= cfg.MaxSeqs {
				fail("refused a prompt that fits: %v", err)
			}
		case 2:
			id := fmt.Sprintf("r%d", next()%(ids+1))
			if next()%4 == 0 {
				id += ".1" // a completion, forked or not yet
			}
			free := pool.NumFree()
			log = append(log, fmt.Sprintf("abort %s: %v", id, s.Abort(id)))
			if m := searches[id]; m != nil { // a beam search's root: the whole search goes
				for _, x := range m {
					s.Abort(x)
				}
				delete(searches, id)
			}
			if pool.Has(id) || pool.NumFree() < free {
				fail("abort left %s's blocks in the pool", id)
			}
		default:
			step()
		}
	}
	// Everything queued finishes: preemption never livelocks, nothing waits forever.
	for n := 0; !s.Done(); n++ {
		if n > 2000 {
			fail("no progress: %d waiting, %d running after 2000 steps", s.NumWaiting(), s.NumRunning())
		}
		step()
	}
	if len(s.forkOf) != 0 {
		fail("all requests done but forks pending: %v", s.forkOf)
	}
	if st := pool.Stats(); st.Free != st.Blocks || st.Sequences != 0 {
		fail("all requests done but %d of %d blocks free, %d sequences", st.Free, st.Blocks, st.Sequences)
	}
	// Every id the scheduler took left it exactly once (Retired: what the
	// engine's other per-request state follows).
	for _, id := range s.Retired(nil) {
		if !known[id] {
			fail("retired %s: never taken, or retired twice", id)
		}
		delete(known, id)
	}
	if len(known) != 0 {
		fail("all requests done but never retired: %v", slices.Sorted(maps.Keys(known)))
	}
}

func TestSchedulerRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 1000
	if testing.Short() {
		n = 150
	}
	for i := range n {
		data := make([]byte, 5+rng.IntN(200))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		t.Run("", func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("case %d panicked: %v\ndata %v", i, r, data)
				}
			}()
			drive(t, data)
		})
	}
}

func FuzzScheduler(f *testing.F) {
	f.Add([]byte{8, 3, 4, 1, 30, 0, 0, 5, 2, 1, 0, 0, 3, 3, 3, 3, 3, 2, 1, 3, 3, 3})
	f.Add([]byte{23, 1, 2, 3, 20, 1, 1, 10, 0, 8, 2, 1, 3, 4, 5, 3, 4, 2, 0, 3, 5})
	f.Add([]byte{5, 4, 9, 0, 12, 0, 0, 7, 3, 2, 1, 0, 1, 0, 0, 6, 1, 2, 1, 1, 5, 4, 3, 5, 5, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) { drive(t, data) })
}
