package engine

// n > 1 (Request.N), as vLLM's ParentRequest: a layer above the loop
// that makes one request's N completions N sequences of the scheduler,
// each with its own sampler, stop matching and final event, their events
// merged into the request's one channel (Event.Index).
//
// The prompt is computed once, through the prefix cache: the first
// completion is admitted alone, and the others are queued (e.pending)
// when it samples its first token, its prompt's KV then committed; at the
// next intake they find the prompt's whole blocks in the cache and a
// copy of its partial last block (kvcache's partial blocks), and compute
// only the last token, whose row each samples from (with
// Config.NoPrefixCache each computes the whole prompt). Each completion is then an ordinary request:
// cancellation, a slow reader and a failed step end them all (endGroup).

// submitted takes a request from the inbox: a beam search submits its
// first round, any other request admits its first completion (the
// others wait for release).
func (e *Engine) submitted(g *group) {
	if err := g.ctx.Err(); err != nil {
		e.endGroup(g, Abort, err)
		return
	}
	if g.beam != nil {
		e.startBeam(g.beam)
		return
	}
	e.admit(g.members[0])
}

// release queues the completions of g after its first, which has just
// sampled its first token: the prompt is in the prefix cache.
func (e *Engine) release(g *group) {
	if g.beam != nil || g.internal() {
		return
	}
	for _, st := range g.members[1:] {
		if !st.ended {
			e.pending = append(e.pending, st)
		}
	}
}
