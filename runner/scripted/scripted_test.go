package scripted

import (
	"slices"
	"testing"

	"kiln/model"
)

// TestHistoryThroughTables: tokens written through one table are read
// back through it, block copies carry them, and a row's history is its
// sequence's tokens up to the row.
func TestHistoryThroughTables(t *testing.T) {
	var seen [][]int32
	m := &Model{VocabSize: 4, Ctx: 16, BlockSize: 2, Next: func(h []int32, row []float32) {
		seen = append(seen, slices.Clone(h))
		row[len(h)%4] = 1
	}}
	b := model.Batch{Tokens: []int32{7, 8, 9, 5, 6}, Positions: []int32{0, 1, 2, 0, 1}, SeqStarts: []int32{0, 3, 5},
		BlockTables: [][]int32{{4, 1}, {2}}, ContextLens: []int32{3, 2}, LogitRows: []int32{1, 2, 4}}
	logits, err := m.Forward(&b)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{7, 8}, {7, 8, 9}, {5, 6}}
	if !slices.EqualFunc(seen, want, slices.Equal) || len(logits) != 12 || logits[2] != 1 || logits[4+3] != 1 || logits[8+2] != 1 {
		t.Fatalf("histories %v, logits %v", seen, logits)
	}
	if err := m.CopyBlock(1, 3); err != nil {
		t.Fatal(err)
	}
	if h, err := m.History([]int32{4, 3}, 3); err != nil || !slices.Equal(h, []int32{7, 8, 9}) {
		t.Fatalf("history through a copied block: %v, %v", h, err)
	}
	if _, err := m.History([]int32{4, 0}, 3); err == nil {
		t.Fatal("an unwritten position was read")
	}
	if _, err := m.History([]int32{4}, 3); err == nil {
		t.Fatal("a position past the table was read")
	}
}
