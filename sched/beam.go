package sched

import (
	"fmt"
	"slices"
)

// Beam search members (Request.Beam). The scheduler keeps their KV and
// their seats; which continuations survive is the caller's decision,
// applied between steps:
//
//	step:     every member computes its last token; its row is sampled
//	Update:   the member is held (no token appended, not scheduled again)
//	caller:   once all members are held, scores the candidates, then
//	            Branch(p, c, tok)  for every extra continuation of p  (shares p's blocks)
//	            Continue(p, tok)   for p's first continuation         (p decodes tok next)
//	            Abort(p)           for members with none              (blocks freed)
//
// A held member may be preempted like any running request; it then waits
// without being admitted until Continue (its row was already sampled), and
// its Branch children wait too, recomputed from the prefix cache. All
// members of a search share its Width seats against MaxSeqs while any of
// them runs, so Branch never needs a seat.

// search is one beam search's bookkeeping.
type search struct {
	width   int // seats: members at most
	members int // live members (running or waiting)
	running int // of those, running
	mark    int // the seatsHeld call that counted it last
}

// Continue gives held beam member id its next token: it decodes it at
// the next steps. The token must leave the member within its length
// limit.
func (s *Scheduler) Continue(id string, tok int32) error {
	r := s.byID[id]
	switch {
	case r == nil || !r.Beam:
		return fmt.Errorf("sched: continue of %q, which is not a beam member", id)
	case !r.held:
		return fmt.Errorf("sched: continue of beam member %q before its row was sampled", id)
	case len(r.tokens) >= r.maxLen:
		return fmt.Errorf("sched: beam member %q has %d tokens, its limit", id, len(r.tokens))
	}
	r.tokens = append(r.tokens, tok)
	r.held = false
	return nil
}

// Branch adds beam member child to held member parent's search: parent's
// tokens, then tok. A running parent's blocks are shared (kvcache Fork:
// the partial block is copied when one of them writes it) and the child
// runs; a preempted parent's child waits, to be recomputed. Call Branch
// before Continue(parent, ...).
func (s *Scheduler) Branch(parent, child string, tok int32) error {
	p := s.byID[parent]
	switch {
	case p == nil || !p.Beam:
		return fmt.Errorf("sched: branch of %q, which is not a beam member", parent)
	case !p.held:
		return fmt.Errorf("sched: branch of beam member %q before its row was sampled", parent)
	case s.byID[child] != nil || s.forkOf[child] != nil:
		return fmt.Errorf("sched: branch into %q, an id in use", child)
	case p.search.members >= p.search.width:
		return fmt.Errorf("sched: branch of %q: its search has its %d members already", parent, p.search.width)
	case len(p.tokens) >= p.maxLen:
		return fmt.Errorf("sched: beam member %q has %d tokens, its limit", parent, len(p.tokens))
	}
	c := &request{Request: p.Request, arrival: s.arrived, maxLen: p.maxLen, search: p.search}
	c.ID, c.Forks = child, nil
	c.tokens = append(slices.Clip(p.tokens), tok) // a new array: p's is left alone
	if p.running {
		if err := s.pool.Fork(parent, child); err != nil {
			return fmt.Errorf("sched: %w", err)
		}
		c.computed, c.running = p.computed, true
		s.running = append(s.running, c)
		c.search.running++
	} else {
		s.waiting.push(c)
	}
	s.arrived++
	s.byID[child] = c
	c.search.members++
	return nil
}

// seats is how many of MaxSeqs admitting r takes: its completions, or a
// beam search's width when none of its members runs (0 when one does:
// the search holds its seats).
func seats(r *request) int {
	if r.search != nil {
		if r.search.running > 0 {
			return 0
		}
		return r.search.width
	}
	return 1 + len(r.Forks)
}

// seatsHeld counts the seats of MaxSeqs that running requests hold,
// leaving out those except accepts (nil: none): each holds one and one
// per completion not yet forked, and a beam search holds its width while
// any of its members runs.
func (s *Scheduler) seatsHeld(except func(*request) bool) int {
	n := 0
	s.marks++
	for _, r := range s.running {
		switch g := r.search; {
		case except != nil && except(r):
		case g == nil:
			n += 1 + len(r.Forks)
		case g.mark != s.marks:
			g.mark = s.marks
			n += g.width
		}
	}
	return n
}
