package grammar

import (
	"bytes"
	"slices"
)

// trie is the vocabulary's byte strings as a trie laid out in preorder:
// node 0 is the root (the empty string); node i's subtree is [i, end[i]).
// A walk keeps one Earley set per depth and skips a rejected subtree by
// jumping to end[i].
type trie struct {
	label    []byte  // [nodes] the byte on the edge into the node
	depth    []int32 // [nodes] string length at the node
	end      []int32 // [nodes] first node after the subtree
	parent   []int32 // [nodes]
	tokStart []int32 // [nodes+1] tokens ending at node i: toks[tokStart[i]:tokStart[i+1]]
	toks     []int32
	maxDepth int
}

func buildTrie(tokens [][]byte) trie {
	var ids []int32
	for id, b := range tokens {
		if len(b) > 0 {
			ids = append(ids, int32(id))
		}
	}
	slices.SortFunc(ids, func(a, b int32) int {
		if c := bytes.Compare(tokens[a], tokens[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	t := trie{}
	t.label = append(t.label, 0)
	t.depth = append(t.depth, 0)
	t.parent = append(t.parent, -1)
	t.tokStart = append(t.tokStart, 0)
	path := []int32{0} // path[d]: node at depth d on the current branch
	var prev []byte
	for _, id := range ids {
		b := tokens[id]
		// Common prefix with the previous string: those nodes are shared.
		l := 0
		for l < len(prev) && l < len(b) && prev[l] == b[l] {
			l++
		}
		path = path[:l+1]
		for d := l; d < len(b); d++ {
			n := int32(len(t.label))
			t.label = append(t.label, b[d])
			t.depth = append(t.depth, int32(d+1))
			t.parent = append(t.parent, path[d])
			t.tokStart = append(t.tokStart, int32(len(t.toks)))
			path = append(path, n)
		}
		// Tokens are appended in preorder, so node i's tokens run until the
		// next node's tokStart.
		t.toks = append(t.toks, id)
		t.maxDepth = max(t.maxDepth, len(b))
		prev = b
	}
	t.tokStart = append(t.tokStart, int32(len(t.toks)))
	n := len(t.label)
	t.end = make([]int32, n)
	// end[i]: the next node whose depth is not deeper than depth[i].
	var stack []int32
	for i := range n {
		for len(stack) > 0 && t.depth[stack[len(stack)-1]] >= t.depth[i] {
			t.end[stack[len(stack)-1]] = int32(i)
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	for _, s := range stack {
		t.end[s] = int32(n)
	}
	return t
}

// tokensAt returns the tokens whose bytes end at node i.
func (t *trie) tokensAt(i int32) []int32 { return t.toks[t.tokStart[i]:t.tokStart[i+1]] }
