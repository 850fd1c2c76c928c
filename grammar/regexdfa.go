package grammar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"
)

// Regular-language operations the schema compiler needs and a grammar
// cannot state (a grammar has union and concatenation, not intersection or
// complement): a pattern with length bounds, two patterns in allOf, "not"
// of a pattern, the keys a pattern leaves beside declared names. They run
// on deterministic automata over code points, built from pattern
// expressions (parseRegex's, which hold no rule references) and turned
// back into a pattern expression by state elimination.
//
// Every step is bounded: the automata by maxDFAStates, the expression
// given back by maxDFAExprNodes; past either the operation fails with
// ErrTooLarge and the schema is refused, quickly.

const (
	maxNFAStates    = 20000
	maxDFAStates    = 4000
	maxDFAExprNodes = 40000
	// maxDFAWork bounds the elementary steps of one operation (a code
	// point interval tested against a state, an edge pair of a product,
	// an edge of a refinement round): Unicode classes cut the alphabet in
	// thousands of intervals, and a hostile pattern must be refused in a
	// fraction of a second, not after minutes.
	maxDFAWork = 1_000_000
	// maxDFAEdges bounds the edges an automaton holds (its memory).
	maxDFAEdges = 200_000
	// A schema's string automaton becomes an expression (one regular
	// expression, as patterns are) only when small; larger ones stay
	// automata (OpJSONChars), whose size is linear in their states.
	maxDFAExprStates     = 32
	maxDFAExprNodesSmall = 2000
)

var errDFATooLarge = errors.New("grammar: a pattern operation needs too large an automaton")

// dfaEdge is a transition on the code points [lo, hi].
type dfaEdge struct {
	lo, hi rune
	to     int
}

// dfa is a deterministic automaton over code points; state 0 starts.
// Missing transitions go to an implicit dead state.
type dfa struct {
	edges  [][]dfaEdge // per state, sorted by lo, disjoint
	accept []bool
}

// --- NFA (Thompson) ---

type rxState struct {
	eps   []int
	class []RuneRange // a transition on one code point of class to next
	next  int
}

type rxNFA struct {
	states []rxState
}

func (n *rxNFA) add() (int, error) {
	if len(n.states) >= maxNFAStates {
		return 0, errDFATooLarge
	}
	n.states = append(n.states, rxState{next: -1})
	return len(n.states) - 1, nil
}

// build adds e between fresh states and returns (start, end).
func (n *rxNFA) build(e *Expr) (int, int, error) {
	s, err := n.add()
	if err != nil {
		return 0, 0, err
	}
	switch e.Op {
	case OpLit:
		cur := s
		for _, r := range e.Lit {
			nx, err := n.add()
			if err != nil {
				return 0, 0, err
			}
			n.states[cur].class = []RuneRange{{r, r}}
			n.states[cur].next = nx
			cur = nx
		}
		return s, cur, nil
	case OpClass:
		t, err := n.add()
		if err != nil {
			return 0, 0, err
		}
		n.states[s].class = e.Ranges
		n.states[s].next = t
		return s, t, nil
	case OpSeq:
		cur := s
		for _, x := range e.Subs {
			a, b, err := n.build(x)
			if err != nil {
				return 0, 0, err
			}
			n.states[cur].eps = append(n.states[cur].eps, a)
			cur = b
		}
		return s, cur, nil
	case OpAlt:
		t, err := n.add()
		if err != nil {
			return 0, 0, err
		}
		for _, x := range e.Subs {
			a, b, err := n.build(x)
			if err != nil {
				return 0, 0, err
			}
			n.states[s].eps = append(n.states[s].eps, a)
			n.states[b].eps = append(n.states[b].eps, t)
		}
		return s, t, nil
	case OpRepeat:
		cur := s
		for range e.Min {
			a, b, err := n.build(e.Subs[0])
			if err != nil {
				return 0, 0, err
			}
			n.states[cur].eps = append(n.states[cur].eps, a)
			cur = b
		}
		if e.Max < 0 {
			a, b, err := n.build(e.Subs[0])
			if err != nil {
				return 0, 0, err
			}
			t, err := n.add()
			if err != nil {
				return 0, 0, err
			}
			n.states[cur].eps = append(n.states[cur].eps, a, t)
			n.states[b].eps = append(n.states[b].eps, a, t)
			return s, t, nil
		}
		t, err := n.add()
		if err != nil {
			return 0, 0, err
		}
		for range e.Max - e.Min {
			n.states[cur].eps = append(n.states[cur].eps, t)
			a, b, err := n.build(e.Subs[0])
			if err != nil {
				return 0, 0, err
			}
			n.states[cur].eps = append(n.states[cur].eps, a)
			cur = b
		}
		n.states[cur].eps = append(n.states[cur].eps, t)
		return s, t, nil
	}
	return 0, 0, fmt.Errorf("grammar: a rule reference in a pattern expression")
}

var anyRune = []RuneRange{{0, surrLo - 1}, {surrHi + 1, utf8.MaxRune}}

// patternDFA returns the automaton of the strings a pattern (parseRegex's
// branches) matches: a search, so an unanchored end allows any text.
func patternDFA(branches []regexBranch) (*dfa, error) {
	var alts []*Expr
	anyText := Star(&Expr{Op: OpClass, Ranges: anyRune})
	for _, br := range branches {
		parts := []*Expr{}
		if !br.startAnchor {
			parts = append(parts, anyText)
		}
		parts = append(parts, br.body)
		if !br.endAnchor {
			parts = append(parts, anyText)
		}
		alts = append(alts, Seq(parts...))
	}
	return exprDFA(Alt(alts...))
}

// exprDFA determinizes a pattern expression.
func exprDFA(e *Expr) (*dfa, error) {
	n := &rxNFA{}
	start, end, err := n.build(e)
	if err != nil {
		return nil, err
	}
	work, edges := 0, 0
	closure := func(set []int) []int {
		seen := map[int]bool{}
		stack := slices.Clone(set)
		var out []int
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			work++
			if seen[x] {
				continue
			}
			seen[x] = true
			out = append(out, x)
			stack = append(stack, n.states[x].eps...)
		}
		sort.Ints(out)
		return out
	}
	var kb []byte
	key := func(set []int) string {
		kb = kb[:0]
		for _, x := range set {
			kb = binary.AppendUvarint(kb, uint64(x))
		}
		return string(kb)
	}
	d := &dfa{}
	index := map[string]int{}
	var sets [][]int
	addSet := func(set []int) (int, error) {
		k := key(set)
		if i, ok := index[k]; ok {
			return i, nil
		}
		if len(sets) >= maxDFAStates {
			return 0, errDFATooLarge
		}
		index[k] = len(sets)
		sets = append(sets, set)
		d.edges = append(d.edges, nil)
		d.accept = append(d.accept, slices.Contains(set, end))
		return len(sets) - 1, nil
	}
	if _, err := addSet(closure([]int{start})); err != nil {
		return nil, err
	}
	for i := 0; i < len(sets); i++ {
		// Split the code points at every boundary of the set's classes.
		var cuts []rune
		for _, x := range sets[i] {
			for _, r := range n.states[x].class {
				cuts = append(cuts, r.Lo, r.Hi+1)
			}
		}
		sort.Slice(cuts, func(a, b int) bool { return cuts[a] < cuts[b] })
		cuts = slices.Compact(cuts)
		work += len(cuts) * (len(sets[i]) + 1)
		if work > maxDFAWork {
			return nil, errDFATooLarge
		}
		for c := 0; c+1 < len(cuts); c++ {
			lo, hi := cuts[c], cuts[c+1]-1
			var next []int
			for _, x := range sets[i] {
				if classHas(n.states[x].class, lo) {
					next = append(next, n.states[x].next)
				}
			}
			if len(next) == 0 {
				continue
			}
			to, err := addSet(closure(next))
			if err != nil {
				return nil, err
			}
			es := d.edges[i]
			if k := len(es); k > 0 && es[k-1].to == to && es[k-1].hi+1 == lo {
				es[k-1].hi = hi
			} else {
				es = append(es, dfaEdge{lo, hi, to})
				if edges++; edges > maxDFAEdges {
					return nil, errDFATooLarge
				}
			}
			d.edges[i] = es
		}
	}
	return d, nil
}

// step returns the state after code point r, or -1 (dead).
func (d *dfa) step(q int, r rune) int {
	for _, e := range d.edges[q] {
		if r >= e.lo && r <= e.hi {
			return e.to
		}
	}
	return -1
}

// matches reports whether d accepts s.
func (d *dfa) matches(s string) bool {
	q := 0
	for _, r := range s {
		if q = d.step(q, r); q < 0 {
			return false
		}
	}
	return d.accept[q]
}

// complement returns the automaton of the strings d rejects (any code
// points but surrogates).
func (d *dfa) complement() *dfa {
	n := len(d.edges)
	out := &dfa{edges: make([][]dfaEdge, n+1), accept: make([]bool, n+1)}
	dead := n
	for q := range n {
		out.accept[q] = !d.accept[q]
		out.edges[q] = fillEdges(d.edges[q], dead)
	}
	out.accept[dead] = true
	out.edges[dead] = fillEdges(nil, dead)
	return out
}

// fillEdges completes sorted edges over all code points, the gaps to dead.
func fillEdges(es []dfaEdge, dead int) []dfaEdge {
	var out []dfaEdge
	next := rune(0)
	for _, e := range es {
		if e.lo > next {
			out = append(out, dfaEdge{next, e.lo - 1, dead})
		}
		out = append(out, e)
		next = e.hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, dfaEdge{next, utf8.MaxRune, dead})
	}
	return out
}

// intersect returns the product automaton (both accept).
func intersect(a, b *dfa) (*dfa, error) {
	type pair struct{ x, y int }
	index := map[pair]int{}
	var pairs []pair
	out := &dfa{}
	add := func(p pair) (int, error) {
		if i, ok := index[p]; ok {
			return i, nil
		}
		if len(pairs) >= maxDFAStates {
			return 0, errDFATooLarge
		}
		index[p] = len(pairs)
		pairs = append(pairs, p)
		out.edges = append(out.edges, nil)
		out.accept = append(out.accept, a.accept[p.x] && b.accept[p.y])
		return len(pairs) - 1, nil
	}
	if _, err := add(pair{0, 0}); err != nil {
		return nil, err
	}
	work, edges := 0, 0
	for i := 0; i < len(pairs); i++ {
		p := pairs[i]
		if work += len(a.edges[p.x]) * len(b.edges[p.y]); work > maxDFAWork {
			return nil, errDFATooLarge
		}
		for _, ea := range a.edges[p.x] {
			for _, eb := range b.edges[p.y] {
				lo, hi := max(ea.lo, eb.lo), min(ea.hi, eb.hi)
				if lo > hi {
					continue
				}
				to, err := add(pair{ea.to, eb.to})
				if err != nil {
					return nil, err
				}
				out.edges[i] = append(out.edges[i], dfaEdge{lo, hi, to})
				if edges++; edges > maxDFAEdges {
					return nil, errDFATooLarge
				}
			}
		}
		slices.SortFunc(out.edges[i], func(x, y dfaEdge) int { return int(x.lo - y.lo) })
	}
	return out, nil
}

// lengthDFA returns the automaton of the strings of lo to hi code points
// (hi < 0: no maximum).
func lengthDFA(lo, hi int) (*dfa, error) {
	top := hi
	if hi < 0 {
		top = lo
	}
	if top+1 > maxDFAStates {
		return nil, errDFATooLarge
	}
	d := &dfa{edges: make([][]dfaEdge, top+1), accept: make([]bool, top+1)}
	for i := 0; i <= top; i++ {
		d.accept[i] = i >= lo
		switch {
		case i < top:
			d.edges[i] = []dfaEdge{{0, utf8.MaxRune, i + 1}}
		case hi < 0:
			d.edges[i] = []dfaEdge{{0, utf8.MaxRune, i}}
		}
	}
	return d, nil
}

// finiteDFA returns the automaton of a finite set of strings.
func finiteDFA(words []string) *dfa {
	d := &dfa{edges: [][]dfaEdge{nil}, accept: []bool{false}}
	for _, w := range words {
		q := 0
		for _, r := range w {
			nx := d.step(q, r)
			if nx < 0 {
				d.edges = append(d.edges, nil)
				d.accept = append(d.accept, false)
				nx = len(d.edges) - 1
				d.edges[q] = append(d.edges[q], dfaEdge{r, r, nx})
				slices.SortFunc(d.edges[q], func(x, y dfaEdge) int { return int(x.lo - y.lo) })
			}
			q = nx
		}
		d.accept[q] = true
	}
	return d
}

// isEmpty reports whether d accepts nothing.
func (d *dfa) isEmpty() bool {
	return !slices.Contains(d.live(), true)
}

// live marks the states from which an accepting state is reachable and
// that are reachable from the start.
func (d *dfa) live() []bool {
	n := len(d.edges)
	reach := make([]bool, n)
	stack := []int{0}
	reach[0] = true
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range d.edges[q] {
			if !reach[e.to] {
				reach[e.to] = true
				stack = append(stack, e.to)
			}
		}
	}
	co := make([]bool, n)
	for q := range n {
		co[q] = d.accept[q]
	}
	for changed := true; changed; {
		changed = false
		for q := range n {
			if co[q] {
				continue
			}
			for _, e := range d.edges[q] {
				if co[e.to] {
					co[q] = true
					changed = true
					break
				}
			}
		}
	}
	out := make([]bool, n)
	for q := range n {
		out[q] = reach[q] && co[q]
	}
	return out
}

// toExpr returns a pattern expression of d's language, by state
// elimination over the live states (fewest in × out edges first).
func (d *dfa) toExpr() (*Expr, error) { return d.toExprLimit(maxDFAExprNodes) }

// toExprLimit is toExpr with a bound on the expression's nodes (< 0: none).
func (d *dfa) toExprLimit(limit int) (*Expr, error) {
	live := d.live()
	if !live[0] {
		return Never(), nil
	}
	n := len(d.edges)
	// Generalized automaton: states 0..n-1, plus a final state n.
	final := n
	label := map[[2]int]*Expr{}
	addLabel := func(i, j int, e *Expr) {
		k := [2]int{i, j}
		if old, ok := label[k]; ok {
			label[k] = Alt(old, e)
		} else {
			label[k] = e
		}
	}
	for q := range n {
		if !live[q] {
			continue
		}
		byTarget := map[int][]RuneRange{}
		var targets []int
		for _, e := range d.edges[q] {
			if !live[e.to] {
				continue
			}
			if _, ok := byTarget[e.to]; !ok {
				targets = append(targets, e.to)
			}
			byTarget[e.to] = append(byTarget[e.to], RuneRange{e.lo, e.hi})
		}
		for _, t := range targets {
			cls := NewClass(byTarget[t]...)
			if len(cls) == 0 {
				continue
			}
			var x *Expr
			if len(cls) == 1 && cls[0].Lo == cls[0].Hi {
				x = Lit(string(cls[0].Lo))
			} else {
				x = &Expr{Op: OpClass, Ranges: cls}
			}
			addLabel(q, t, x)
		}
		if d.accept[q] {
			addLabel(q, final, Lit(""))
		}
	}
	// A fresh start (so that state 0 can be eliminated like the others).
	start := n + 1
	addLabel(start, 0, Lit(""))
	remaining := map[int]bool{}
	for q := range n {
		if live[q] {
			remaining[q] = true
		}
	}
	depthOf := d.acyclicDepths(live)
	size := 0
	for len(remaining) > 0 {
		// Pick the state with the fewest in × out edges.
		best, bestCost := -1, 0
		ins := map[int][]int{}
		outs := map[int][]int{}
		for k := range label {
			if k[0] != k[1] {
				outs[k[0]] = append(outs[k[0]], k[1])
				ins[k[1]] = append(ins[k[1]], k[0])
			}
		}
		for q := range remaining {
			cost := len(ins[q]) * len(outs[q])
			if depthOf != nil {
				cost = -depthOf[q] // acyclic: the deepest first (suffixes build up once)
			}
			if best < 0 || cost < bestCost || cost == bestCost && q < best {
				best, bestCost = q, cost
			}
		}
		q := best
		delete(remaining, q)
		var loop *Expr
		if l, ok := label[[2]int{q, q}]; ok {
			loop = Star(l)
			delete(label, [2]int{q, q})
		}
		inList, outList := ins[q], outs[q]
		sort.Ints(inList)
		sort.Ints(outList)
		for _, i := range inList {
			for _, j := range outList {
				parts := []*Expr{label[[2]int{i, q}]}
				if loop != nil {
					parts = append(parts, loop)
				}
				parts = append(parts, label[[2]int{q, j}])
				e := Seq(parts...)
				if limit >= 0 {
					size += exprSize(e)
					if size > limit {
						return nil, errDFATooLarge
					}
				}
				addLabel(i, j, e)
			}
		}
		for _, i := range inList {
			delete(label, [2]int{i, q})
		}
		for _, j := range outList {
			delete(label, [2]int{q, j})
		}
	}
	e, ok := label[[2]int{start, final}]
	if !ok {
		return Never(), nil
	}
	if limit >= 0 && exprSize(e) > limit {
		return nil, errDFATooLarge
	}
	return e, nil
}

// exprSize counts the nodes of e as a tree (shared subtrees counted at
// each use: the automaton built from it copies them).
func exprSize(e *Expr) int {
	n := 1
	for _, s := range e.Subs {
		n += exprSize(s)
		if n > 4*maxDFAExprNodes {
			return n
		}
	}
	return n
}

// maxMinimizeStates bounds the automata minimize refines (Moore's
// algorithm takes up to a round per state); larger ones are only trimmed.
const maxMinimizeStates = 512

// minimize returns the minimal automaton of d's language (Moore's
// partition refinement over the live states; dead ones dropped). Above
// maxMinimizeStates it only drops the dead states.
func (d *dfa) minimize() *dfa {
	if len(d.edges) > maxMinimizeStates {
		return d.trim()
	}
	live := d.live()
	n := len(d.edges)
	if !live[0] {
		return &dfa{edges: [][]dfaEdge{nil}, accept: []bool{false}}
	}
	// Edges over live states only, as a total map on the cut points.
	block := make([]int, n)
	for q := range n {
		switch {
		case !live[q]:
			block[q] = -1
		case d.accept[q]:
			block[q] = 1
		default:
			block[q] = 0
		}
	}
	var buf []byte
	sig := func(q int) string {
		buf = binary.AppendVarint(buf[:0], int64(block[q]))
		for _, e := range d.edges[q] {
			if block[e.to] >= 0 {
				buf = binary.AppendVarint(buf, int64(e.lo))
				buf = binary.AppendVarint(buf, int64(e.hi))
				buf = binary.AppendVarint(buf, int64(block[e.to]))
			}
		}
		return string(buf)
	}
	count := -1
	total := 0
	for _, es := range d.edges {
		total += len(es) + 1
	}
	for round := 0; ; round++ {
		if round*total > maxDFAWork {
			return d.trim() // correct, only not minimal
		}
		ids := map[string]int{}
		next := make([]int, n)
		for q := range n {
			if block[q] < 0 {
				next[q] = -1
				continue
			}
			k := sig(q)
			id, ok := ids[k]
			if !ok {
				id = len(ids)
				ids[k] = id
			}
			next[q] = id
		}
		block = next
		if len(ids) == count {
			break
		}
		count = len(ids)
	}
	// Renumber so that the start's block is 0.
	order := map[int]int{block[0]: 0}
	for q := range n {
		if b := block[q]; b >= 0 {
			if _, ok := order[b]; !ok {
				order[b] = len(order)
			}
		}
	}
	out := &dfa{edges: make([][]dfaEdge, len(order)), accept: make([]bool, len(order))}
	done := make([]bool, len(order))
	for q := range n {
		b := block[q]
		if b < 0 || done[order[b]] {
			continue
		}
		i := order[b]
		done[i] = true
		out.accept[i] = d.accept[q]
		for _, e := range d.edges[q] {
			if block[e.to] < 0 {
				continue
			}
			to := order[block[e.to]]
			es := out.edges[i]
			if k := len(es); k > 0 && es[k-1].to == to && es[k-1].hi+1 == e.lo {
				es[k-1].hi = e.hi
			} else {
				es = append(es, dfaEdge{e.lo, e.hi, to})
			}
			out.edges[i] = es
		}
	}
	return out
}

// acyclicDepths returns each live state's longest distance from the start
// when the live part of d has no cycle, else nil.
func (d *dfa) acyclicDepths(live []bool) []int {
	n := len(d.edges)
	indeg := make([]int, n)
	for q := range n {
		if !live[q] {
			continue
		}
		for _, e := range d.edges[q] {
			if live[e.to] {
				indeg[e.to]++
			}
		}
	}
	depth := make([]int, n)
	queue := []int{}
	for q := range n {
		if live[q] && indeg[q] == 0 {
			queue = append(queue, q)
		}
	}
	seen := 0
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		seen++
		for _, e := range d.edges[q] {
			if !live[e.to] {
				continue
			}
			depth[e.to] = max(depth[e.to], depth[q]+1)
			if indeg[e.to]--; indeg[e.to] == 0 {
				queue = append(queue, e.to)
			}
		}
	}
	total := 0
	for q := range n {
		if live[q] {
			total++
		}
	}
	if seen != total {
		return nil
	}
	return depth
}

type dfaTargetEdges struct {
	to     int
	ranges []RuneRange
}

// edgesByTarget groups state q's edges by target (a class per target).
func (d *dfa) edgesByTarget(q int) []dfaTargetEdges {
	var out []dfaTargetEdges
	at := map[int]int{}
	for _, e := range d.edges[q] {
		i, ok := at[e.to]
		if !ok {
			i = len(out)
			at[e.to] = i
			out = append(out, dfaTargetEdges{to: e.to})
		}
		out[i].ranges = append(out[i].ranges, RuneRange{e.lo, e.hi})
	}
	for i := range out {
		out[i].ranges = NewClass(out[i].ranges...)
	}
	return out
}

// trim returns d without the states that are unreachable or lead to no
// accepting state (start renumbered 0; a dead start gives an automaton
// accepting nothing).
func (d *dfa) trim() *dfa {
	live := d.live()
	if !live[0] {
		return &dfa{edges: [][]dfaEdge{nil}, accept: []bool{false}}
	}
	num := make([]int, len(d.edges))
	n := 0
	for q := range d.edges {
		num[q] = -1
		if live[q] {
			num[q] = n
			n++
		}
	}
	out := &dfa{edges: make([][]dfaEdge, n), accept: make([]bool, n)}
	for q := range d.edges {
		if num[q] < 0 {
			continue
		}
		out.accept[num[q]] = d.accept[q]
		for _, e := range d.edges[q] {
			if num[e.to] >= 0 {
				out.edges[num[q]] = append(out.edges[num[q]], dfaEdge{e.lo, e.hi, num[e.to]})
			}
		}
	}
	return out
}
