package grammar

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"
)

// ErrTooLarge is returned (wrapped) when a grammar or schema exceeds a size
// limit: automaton nodes, rules, nesting.
var ErrTooLarge = errors.New("grammar too large")

// MaxProgramNodes bounds the automaton of a compiled grammar (all rules
// together, after ε-removal). Each node costs a few dozen bytes and some
// Earley work, so this also bounds the matcher's cost per byte.
const MaxProgramNodes = 1 << 20

// Program is a compiled grammar: for each rule an ε-free automaton over
// bytes whose edges either read a byte range or call a rule (run it to
// completion, then continue). It is immutable and safe for concurrent use.
//
// Nodes that cannot reach the end of their rule, and calls of rules that
// derive no string, are removed, so that every item an Earley set holds can
// still be completed: a matcher that has accepted a prefix never dead-ends.
type Program struct {
	nodes        []pnode
	ruleStart    []int32 // [rules] start node, -1 for a rule that derives nothing
	nullable     []bool  // [rules] derives the empty string
	names        []string
	root         int32
	classOf      [256]uint8 // byte → equivalence class (bytes no edge tells apart)
	classRep     []byte     // [classes] one byte of each class
	edgeBytes    int64      // bytes of the shared edge arrays
	compileBytes int64      // the budget spent compiling it
}

// Bytes estimates the memory the program holds: its nodes and edges.
func (p *Program) Bytes() int64 {
	return int64(len(p.nodes))*int64(unsafe.Sizeof(pnode{})) + p.edgeBytes + int64(len(p.ruleStart))*16
}

type pnode struct {
	terms []termEdge
	calls []callEdge
	final int32 // the rule this node ends, -1 if it ends none
}

type termEdge struct {
	lo, hi byte
	to     int32
}

type callEdge struct {
	rule, to int32
}

// Empty reports whether the grammar derives no string at all (a schema such
// as false, or one whose constraints contradict each other).
func (p *Program) Empty() bool { return p.ruleStart[p.root] < 0 }

// Nodes returns the number of automaton nodes (a size measure).
func (p *Program) Nodes() int { return len(p.nodes) }

// Compile turns a grammar into a Program within DefaultLimits. It fails on
// a malformed grammar and when the automaton would exceed MaxProgramNodes
// or the memory budget (ErrTooLarge).
func Compile(g *Grammar) (*Program, error) { return CompileWithin(g, DefaultLimits) }

// CompileWithin is Compile with the memory budget of lim: the automaton's
// estimated bytes are counted as it is built and the compilation stops with
// ErrTooLarge as soon as they pass lim.MaxBytes, before the memory is spent.
func CompileWithin(g *Grammar, lim Limits) (*Program, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	bud := newBudget(lim)
	b := &nfaBuilder{bud: bud}
	type ruleNFA struct{ start, accept int32 }
	nfas := make([]ruleNFA, len(g.Rules))
	for i, r := range g.Rules {
		s := b.newState()
		end, err := b.build(r.Body, s, 0)
		if err != nil {
			return nil, fmt.Errorf("grammar: rule %s: %w", r.Name, err)
		}
		nfas[i] = ruleNFA{s, end}
	}
	if err := b.check(); err != nil {
		return nil, fmt.Errorf("grammar: %w", err)
	}
	p := &Program{root: int32(g.Root)}
	p.names = make([]string, len(g.Rules))
	for i, r := range g.Rules {
		p.names[i] = r.Name
	}

	// ε-removal: a node of the program is an NFA state reached by a
	// non-ε edge (or a rule's start); its edges are those of its ε-closure.
	// The ε-removal's own arrays: nodeOf, seen (one int32 per NFA state).
	if err := bud.charge(8 * int64(len(b.states))); err != nil {
		return nil, err
	}
	nodeOf := make([]int32, len(b.states)) // NFA state → program node, -1 none
	for i := range nodeOf {
		nodeOf[i] = -1
	}
	var queue []int32
	ruleOfNode := []int32{}
	intern := func(s int32, rule int32) int32 {
		if n := nodeOf[s]; n >= 0 {
			return n
		}
		n := int32(len(p.nodes))
		nodeOf[s] = n
		p.nodes = append(p.nodes, pnode{final: -1})
		ruleOfNode = append(ruleOfNode, rule)
		queue = append(queue, s)
		return n
	}
	// Every node's edges live in two shared arrays (one allocation each
	// rather than two per node); nodes hold sub-slices of them.
	type span struct{ t0, t1, c0, c1 int32 }
	var spans []span
	var allTerms []termEdge
	var allCalls []callEdge
	p.ruleStart = make([]int32, len(g.Rules))
	for i, nf := range nfas {
		p.ruleStart[i] = intern(nf.start, int32(i))
	}
	var stack []int32
	seen := make([]int32, len(b.states))
	for i := range seen {
		seen[i] = -1
	}
	var terms []termEdge
	var calls []callEdge
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		n := nodeOf[s]
		rule := ruleOfNode[n]
		// ε-closure of s.
		stack = append(stack[:0], s)
		seen[s] = int32(qi)
		terms, calls = terms[:0], calls[:0]
		final := false
		for len(stack) > 0 {
			t := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			st := &b.states[t]
			if t == nfas[rule].accept {
				final = true
			}
			for _, e := range st.eps {
				if seen[e] != int32(qi) {
					seen[e] = int32(qi)
					stack = append(stack, e)
				}
			}
			for _, e := range st.terms {
				terms = append(terms, termEdge{e.lo, e.hi, intern(e.to, rule)})
			}
			for _, e := range st.calls {
				calls = append(calls, callEdge{e.rule, intern(e.to, rule)})
			}
			if len(p.nodes) > MaxProgramNodes {
				return nil, fmt.Errorf("grammar: more than %d automaton nodes: %w", MaxProgramNodes, ErrTooLarge)
			}
		}
		terms, calls = dedupTerms(terms), dedupCalls(calls)
		sp := span{int32(len(allTerms)), 0, int32(len(allCalls)), 0}
		allTerms, allCalls = append(allTerms, terms...), append(allCalls, calls...)
		sp.t1, sp.c1 = int32(len(allTerms)), int32(len(allCalls))
		spans = append(spans, sp)
		if final {
			p.nodes[n].final = rule
		}
		// A node, its span and queue entries, its edges (arrays grow by
		// doubling, so up to twice what they hold).
		if err := bud.charge(int64(unsafe.Sizeof(pnode{})+16+12) + 2*8*int64(len(terms)+len(calls))); err != nil {
			return nil, err
		}
	}
	b.states = nil // the NFA is no longer needed
	for i, sp := range spans {
		nd := &p.nodes[i]
		nd.terms = allTerms[sp.t0:sp.t1:sp.t1]
		nd.calls = allCalls[sp.c0:sp.c1:sp.c1]
	}
	p.edgeBytes = 8 * int64(cap(allTerms)+cap(allCalls))
	if err := bud.charge(p.trimBytes()); err != nil {
		return nil, err
	}
	p.trim()
	p.compileBytes = bud.used
	p.computeNullable()
	p.computeClasses()
	return p, nil
}

func dedupTerms(ts []termEdge) []termEdge {
	slices.SortFunc(ts, func(a, b termEdge) int {
		if a.lo != b.lo {
			return int(a.lo) - int(b.lo)
		}
		if a.hi != b.hi {
			return int(a.hi) - int(b.hi)
		}
		return int(a.to - b.to)
	})
	return slices.Compact(ts)
}

func dedupCalls(cs []callEdge) []callEdge {
	slices.SortFunc(cs, func(a, b callEdge) int {
		if a.rule != b.rule {
			return int(a.rule - b.rule)
		}
		return int(a.to - b.to)
	})
	return slices.Compact(cs)
}

// trim removes what can never be part of a complete parse: it finds the
// rules that derive some string (productive) and the nodes from which their
// rule's end is reachable through bytes and productive calls, then drops
// every edge into another node and every call of another rule.
func (p *Program) trim() {
	nr := len(p.ruleStart)
	nn := len(p.nodes)
	productive := make([]bool, nr)
	live := make([]bool, nn)
	// Reverse edges, for a backward search from final nodes, in CSR form
	// (offsets per target node into one array) to keep one allocation.
	type callRev struct{ from, rule int32 }
	revOff := make([]int32, nn+1)
	callOff := make([]int32, nn+1)
	for i := range p.nodes {
		for _, e := range p.nodes[i].terms {
			revOff[e.to+1]++
		}
		for _, e := range p.nodes[i].calls {
			callOff[e.to+1]++
		}
	}
	for i := range nn {
		revOff[i+1] += revOff[i]
		callOff[i+1] += callOff[i]
	}
	rev := make([]int32, revOff[nn])
	pendingCalls := make([]callRev, callOff[nn]) // per target node: call edges into it
	{
		rf, cf := slices.Clone(revOff[:nn]), slices.Clone(callOff[:nn])
		for i := range p.nodes {
			for _, e := range p.nodes[i].terms {
				rev[rf[e.to]] = int32(i)
				rf[e.to]++
			}
			for _, e := range p.nodes[i].calls {
				pendingCalls[cf[e.to]] = callRev{int32(i), e.rule}
				cf[e.to]++
			}
		}
	}
	var work []int32
	markLive := func(n int32) {
		if !live[n] {
			live[n] = true
			work = append(work, n)
		}
	}
	for i := range p.nodes {
		if p.nodes[i].final >= 0 {
			markLive(int32(i))
		}
	}
	waiting := make([][]int32, nr) // per rule: nodes waiting for it to become productive
	startOf := map[int32][]int32{} // start node → rules starting there
	for r, s := range p.ruleStart {
		startOf[s] = append(startOf[s], int32(r))
	}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		for _, f := range rev[revOff[n]:revOff[n+1]] {
			markLive(f)
		}
		for _, c := range pendingCalls[callOff[n]:callOff[n+1]] {
			if productive[c.rule] {
				markLive(c.from)
			} else {
				waiting[c.rule] = append(waiting[c.rule], c.from)
			}
		}
		// A live rule start makes its rule productive.
		for _, r := range startOf[n] {
			if !productive[r] {
				productive[r] = true
				for _, f := range waiting[r] {
					markLive(f)
				}
				waiting[r] = nil
			}
		}
	}
	for i := range p.nodes {
		nd := &p.nodes[i]
		nd.terms = slices.DeleteFunc(nd.terms, func(e termEdge) bool { return !live[e.to] })
		nd.calls = slices.DeleteFunc(nd.calls, func(e callEdge) bool { return !live[e.to] || !productive[e.rule] })
	}
	for r := range nr {
		if !productive[r] {
			p.ruleStart[r] = -1
		}
	}
}

// trimBytes estimates trim's working memory: per node a liveness flag, two
// offsets twice (the arrays and their cursors) and a work-stack slot; per
// edge one reverse entry (8 bytes for a call).
func (p *Program) trimBytes() int64 {
	return int64(len(p.nodes))*(1+16+8+4) + p.edgeBytes
}

// computeNullable finds the rules that derive the empty string: those whose
// start reaches their end through calls of nullable rules only.
func (p *Program) computeNullable() {
	p.nullable = make([]bool, len(p.ruleStart))
	for changed := true; changed; {
		changed = false
		for r, s := range p.ruleStart {
			if s < 0 || p.nullable[r] {
				continue
			}
			if p.nullableFrom(s, map[int32]bool{}) {
				p.nullable[r] = true
				changed = true
			}
		}
	}
}

func (p *Program) nullableFrom(n int32, seen map[int32]bool) bool {
	if p.nodes[n].final >= 0 {
		return true
	}
	if seen[n] {
		return false
	}
	seen[n] = true
	for _, c := range p.nodes[n].calls {
		if p.nullable[c.rule] && p.nullableFrom(c.to, seen) {
			return true
		}
	}
	return false
}

// computeClasses partitions the bytes into classes that every edge either
// contains whole or not at all; Earley transitions are cached per class.
func (p *Program) computeClasses() {
	var cut [257]bool // cut[b]: a class starts at b
	cut[0] = true
	for i := range p.nodes {
		for _, e := range p.nodes[i].terms {
			cut[e.lo] = true
			cut[int(e.hi)+1] = true
		}
	}
	c := -1
	for b := range 256 {
		if cut[b] {
			c++
			p.classRep = append(p.classRep, byte(b))
		}
		p.classOf[b] = uint8(c)
	}
}

// nfaBuilder builds a Thompson automaton with ε edges.
type nfaBuilder struct {
	states []nfaState
	bud    *budget
	err    error // the budget's refusal, once given
}

type nfaState struct {
	eps   []int32
	terms []termEdge
	calls []callEdge
}

// nfaStateBytes is what one NFA state costs: its struct (twice, as the
// states array grows by doubling) and the smallest allocation of the one
// edge slice most states have.
const nfaStateBytes = 2*int64(unsafe.Sizeof(nfaState{})) + 16

func (b *nfaBuilder) newState() int32 {
	if b.err == nil && b.bud != nil {
		b.err = b.bud.charge(nfaStateBytes)
	}
	b.states = append(b.states, nfaState{})
	return int32(len(b.states) - 1)
}

func (b *nfaBuilder) check() error {
	if b.err != nil {
		return b.err
	}
	if len(b.states) > 4*MaxProgramNodes {
		return fmt.Errorf("more than %d automaton states: %w", 4*MaxProgramNodes, ErrTooLarge)
	}
	return nil
}

// build adds the automaton of e starting at from and returns its end state.
// It never adds an edge into from, so alternatives may share their start.
func (b *nfaBuilder) build(e *Expr, from int32, depth int) (int32, error) {
	if err := b.check(); err != nil {
		return 0, err
	}
	if depth > maxExprDepth {
		return 0, fmt.Errorf("expression nested deeper than %d", maxExprDepth)
	}
	switch e.Op {
	case OpLit:
		if e.Lit == "" {
			// A fresh end, so that the caller may add edges out of it.
			end := b.newState()
			b.states[from].eps = append(b.states[from].eps, end)
			return end, nil
		}
		cur := from
		for i := 0; i < len(e.Lit); i++ {
			if b.err != nil {
				return 0, b.err
			}
			n := b.newState()
			b.states[cur].terms = append(b.states[cur].terms, termEdge{e.Lit[i], e.Lit[i], n})
			cur = n
		}
		return cur, nil
	case OpClass:
		end := b.newState()
		for _, r := range e.Ranges {
			utf8Sequences(r.Lo, r.Hi, func(seq []byteRange) {
				cur := from
				for i, br := range seq {
					n := end
					if i < len(seq)-1 {
						n = b.newState()
					}
					b.states[cur].terms = append(b.states[cur].terms, termEdge{br.lo, br.hi, n})
					cur = n
				}
			})
		}
		return end, nil
	case OpSeq:
		cur := from
		for _, s := range e.Subs {
			var err error
			if cur, err = b.build(s, cur, depth+1); err != nil {
				return 0, err
			}
		}
		if cur == from {
			return b.build(Lit(""), from, depth)
		}
		return cur, nil
	case OpAlt:
		end := b.newState()
		for _, s := range e.Subs {
			e2, err := b.build(s, from, depth+1)
			if err != nil {
				return 0, err
			}
			b.states[e2].eps = append(b.states[e2].eps, end)
		}
		return end, nil
	case OpRepeat:
		x := e.Subs[0]
		cur := from
		for range e.Min {
			var err error
			if cur, err = b.build(x, cur, depth+1); err != nil {
				return 0, err
			}
		}
		if e.Max < 0 {
			loop := b.newState()
			b.states[cur].eps = append(b.states[cur].eps, loop)
			body, err := b.build(x, loop, depth+1)
			if err != nil {
				return 0, err
			}
			b.states[body].eps = append(b.states[body].eps, loop)
			exit := b.newState()
			b.states[loop].eps = append(b.states[loop].eps, exit)
			return exit, nil
		}
		exit := b.newState()
		for range e.Max - e.Min {
			b.states[cur].eps = append(b.states[cur].eps, exit)
			var err error
			if cur, err = b.build(x, cur, depth+1); err != nil {
				return 0, err
			}
		}
		b.states[cur].eps = append(b.states[cur].eps, exit)
		return exit, nil
	case OpRef:
		end := b.newState()
		b.states[from].calls = append(b.states[from].calls, callEdge{int32(e.Rule), end})
		return end, nil
	case OpJSONChars:
		// A state per automaton state (fresh: nothing enters from), the
		// encodings of each edge's code points between them.
		d := e.Auto
		st := make([]int32, len(d.edges))
		for q := range st {
			st[q] = b.newState()
		}
		end := b.newState()
		b.states[from].eps = append(b.states[from].eps, st[0])
		for q := range d.edges {
			if d.accept[q] {
				b.states[st[q]].eps = append(b.states[st[q]].eps, end)
			}
			for _, g := range d.edgesByTarget(q) {
				x, err := b.build(jsonEncodeClassCompact(g.ranges), st[q], depth+1)
				if err != nil {
					return 0, err
				}
				b.states[x].eps = append(b.states[x].eps, st[g.to])
			}
			if err := b.check(); err != nil {
				return 0, err
			}
		}
		return end, nil
	}
	return 0, fmt.Errorf("unknown op %d", e.Op)
}
