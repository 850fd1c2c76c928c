package tokenizer

import "strings"

// fragment is a piece of the input after special tokens are split out:
// either a special token (tok >= 0) or raw text text[lo:hi] (tok == -1).
type fragment struct {
	tok    int32
	lo, hi int
}

// partition splits text around special tokens the way llama.cpp's
// tokenizer_st_partition does: for each special token, longest text first,
// every occurrence in every remaining raw fragment is cut out, left to right.
// Control and unknown tokens are considered only when parseSpecial is set;
// user-defined tokens always are. A token with the lstrip (rstrip) attribute
// also drops the whitespace just before (after) it.
//
// Special tokens that occur nowhere in text cannot occur in any fragment, so
// only those the trie finds in text are tried (same result, less scanning).
func (t *Tokenizer) partition(text string, parseSpecial bool, s *session) []fragment {
	frags := append(s.frags[:0], fragment{tok: -1, lo: 0, hi: len(text)})
	if len(text) == 0 {
		s.frags = frags[:0]
		return s.frags
	}
	present := t.trie.present(text, s.present[:0])
	s.present = present
	if len(present) == 0 {
		s.frags = frags
		return frags
	}
	// present holds ranks in specials order (longest first).
	next := s.frags2[:0]
	for _, rank := range present {
		id := t.specials[rank]
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		tokText := t.v.Tokens[id]
		next = next[:0]
		for _, f := range frags {
			if f.tok >= 0 {
				next = append(next, f)
				continue
			}
			next = splitFragment(next, text, f.lo, f.hi, id, tokText, a)
		}
		frags, next = next, frags
	}
	s.frags, s.frags2 = frags, next
	return frags
}

// splitFragment appends the pieces of raw text[lo:hi] with every occurrence
// of the special token id (text tok) cut out.
func splitFragment(out []fragment, text string, lo, hi int, id int32, tok string, a attr) []fragment {
	pos := lo
	for {
		m := strings.Index(text[pos:hi], tok)
		if m < 0 {
			if pos < hi {
				out = append(out, fragment{tok: -1, lo: pos, hi: hi})
			}
			return out
		}
		m += pos
		left := m
		if a&attrLStrip != 0 {
			for left > pos && isCSpace(text[left-1]) {
				left--
			}
		}
		if left > pos {
			out = append(out, fragment{tok: -1, lo: pos, hi: left})
		}
		out = append(out, fragment{tok: id, lo: m, hi: m + len(tok)})
		right := m + len(tok)
		if right >= hi {
			return out
		}
		if a&attrRStrip != 0 {
			for right < hi && isCSpace(text[right]) {
				right++
			}
		}
		pos = right
	}
}

// isCSpace is C's isspace in the "C" locale.
func isCSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}

// specialTrie is a byte trie over the special tokens' texts, used to find
// which of them occur anywhere in a text in one pass.
type specialTrie struct {
	first [256]bool  // a special token starts with this byte
	nodes []trieNode // nodes[0] is the root
}

type trieNode struct {
	edges []trieEdge // sorted by byte
	rank  int32      // rank (index in specials) of the token ending here, or -1
}

type trieEdge struct {
	b    byte
	next int32
}

func newSpecialTrie(texts []string, specials []int32) specialTrie {
	tr := specialTrie{nodes: []trieNode{{rank: -1}}}
	for rank, id := range specials {
		text := texts[id]
		if text == "" {
			continue
		}
		tr.first[text[0]] = true
		n := int32(0)
		for i := 0; i < len(text); i++ {
			n = tr.child(n, text[i])
		}
		tr.nodes[n].rank = int32(rank)
	}
	return tr
}

func (tr *specialTrie) child(n int32, b byte) int32 {
	edges := tr.nodes[n].edges
	i := 0
	for i < len(edges) && edges[i].b < b {
		i++
	}
	if i < len(edges) && edges[i].b == b {
		return edges[i].next
	}
	tr.nodes = append(tr.nodes, trieNode{rank: -1})
	c := int32(len(tr.nodes) - 1)
	edges = append(edges, trieEdge{})
	copy(edges[i+1:], edges[i:])
	edges[i] = trieEdge{b: b, next: c}
	tr.nodes[n].edges = edges
	return c
}

func (tr *specialTrie) step(n int32, b byte) int32 {
	for _, e := range tr.nodes[n].edges {
		if e.b == b {
			return e.next
		}
		if e.b > b {
			break
		}
	}
	return -1
}

// present appends to dst the ranks of the special tokens occurring in text,
// in increasing rank order.
func (tr *specialTrie) present(text string, dst []int32) []int32 {
	if len(tr.nodes) == 1 {
		return dst
	}
	var seen map[int32]bool
	for i := 0; i < len(text); i++ {
		if !tr.first[text[i]] {
			continue
		}
		n := int32(0)
		for j := i; j < len(text); j++ {
			if n = tr.step(n, text[j]); n < 0 {
				break
			}
			if r := tr.nodes[n].rank; r >= 0 {
				if seen == nil {
					seen = map[int32]bool{}
				}
				if !seen[r] {
					seen[r] = true
					dst = append(dst, r)
				}
			}
		}
	}
	sortInt32(dst)
	return dst
}

func sortInt32(a []int32) {
	// insertion sort: the list is short (tokens present in one text)
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
