package kvcache

// Stats are the pool's counters, for metrics.
type Stats struct {
	Blocks, Free  int   // pool size; blocks no sequence holds (cached or not)
	PrefixQueries int64 // tokens of new sequences looked up in the prefix cache
	PrefixHits    int64 // of those, tokens served from cached blocks
	Evictions     int64 // cached blocks reused for other contents
	CachedBlocks  int   // blocks in the hash index (held or free)
	Sequences     int   // sequences holding blocks
}

// Usage is the fraction of blocks held by sequences, 0 to 1.
func (s Stats) Usage() float64 {
	if s.Blocks == 0 {
		return 0
	}
	return float64(s.Blocks-s.Free) / float64(s.Blocks)
}

// Stats returns the pool's counters now.
func (p *Pool) Stats() Stats {
	s := p.stats
	s.Blocks, s.Free, s.CachedBlocks, s.Sequences = len(p.blocks), p.free.len, len(p.index), len(p.seqs)
	return s
}
