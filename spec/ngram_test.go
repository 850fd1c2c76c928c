package spec

import (
	"slices"
	"testing"
)

func TestNGramPropose(t *testing.T) {
	g, err := NGram{}.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		g    NGram
		seq  []int32
		k    int
		want []int32
	}{
		{"empty", g, nil, 4, nil},
		{"one token", g, []int32{7}, 4, nil},
		{"no repeat", g, []int32{1, 2, 3, 4, 5}, 4, nil},
		{"unigram", g, []int32{1, 2, 3, 1}, 4, []int32{2, 3, 1}},
		{"k bounds", g, []int32{1, 2, 3, 1}, 2, []int32{2, 3}},
		{"k zero", g, []int32{1, 2, 3, 1}, 0, nil},
		// The longest n wins over a more recent shorter match: "5 1 2"
		// occurs at 0 (followed by 9); "2" alone occurs later (followed by 8).
		{"longest n first", g, []int32{5, 1, 2, 9, 2, 8, 5, 1, 2}, 3, []int32{9, 2, 8}},
		// Among equal n, the most recent occurrence wins.
		{"most recent", g, []int32{1, 2, 3, 1, 2, 4, 1, 2}, 1, []int32{4}},
		// A period shorter than k runs into the suffix.
		{"period", g, []int32{9, 4, 4, 4}, 5, []int32{4}},
		{"period 2", g, []int32{1, 2, 1, 2, 1, 2}, 8, []int32{1, 2}},
		{"min 2 skips unigrams", NGram{Min: 2, Max: 3}, []int32{1, 2, 3, 1}, 4, nil},
		{"max 1", NGram{Min: 1, Max: 1}, []int32{5, 1, 2, 9, 2, 8, 5, 1, 2}, 2, []int32{8, 5}},
	}
	for _, c := range cases {
		got := c.g.Propose(nil, c.seq, c.k)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: Propose(%v, k=%d) = %v, want %v", c.name, c.seq, c.k, got, c.want)
		}
	}
}

func TestNGramResolved(t *testing.T) {
	for _, bad := range []NGram{{Min: -1}, {Min: 3, Max: 2}, {Max: -2}} {
		if _, err := bad.Resolved(); err == nil {
			t.Errorf("Resolved(%+v): no error", bad)
		}
	}
	g, err := NGram{Min: 6}.Resolved()
	if err != nil || g.Max != 6 {
		t.Errorf("NGram{Min: 6}.Resolved() = %+v, %v; want Max 6", g, err)
	}
}

// FuzzNGramPropose checks the proposer's contract on any sequence: at most
// k tokens, a contiguous span of seq that follows an earlier occurrence
// of some suffix of length in [Min, Max], never a panic.
func FuzzNGramPropose(f *testing.F) {
	f.Add([]byte{1, 2, 3, 1, 2}, uint8(4), uint8(1), uint8(4))
	f.Add([]byte{}, uint8(1), uint8(1), uint8(1))
	f.Add([]byte{4, 4, 4, 4}, uint8(9), uint8(2), uint8(3))
	f.Fuzz(func(t *testing.T, raw []byte, k, lo, hi uint8) {
		seq := make([]int32, len(raw))
		for i, b := range raw {
			seq[i] = int32(b % 5)
		}
		g, err := NGram{Min: int(lo % 6), Max: int(hi % 6)}.Resolved()
		if err != nil {
			return
		}
		got := g.Propose(nil, seq, int(k%10))
		if len(got) > int(k%10) {
			t.Fatalf("%d tokens for k=%d", len(got), k%10)
		}
		if len(got) == 0 {
			return
		}
		L := len(seq)
		for n := g.Min; n <= g.Max && n < L; n++ {
			for start := 0; start+n < L; start++ {
				from := start + n
				if slices.Equal(seq[start:from], seq[L-n:]) && slices.Equal(seq[from:min(from+len(got), L)], got) {
					return
				}
			}
		}
		t.Fatalf("draft %v of %v follows no earlier suffix occurrence", got, seq)
	})
}
