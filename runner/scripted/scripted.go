// Package scripted is a runner.Backend for tests: a "model" whose logits
// are any function of the token history, over a paged store that keeps
// token ids instead of keys and values. Each row's history is read back
// through the sequence's block table, exactly as attention would read its
// KV, so a test driving the engine through it also checks that block
// tables, prefix-cache hits and copy-on-write give every sequence
// its own tokens: a wrong block shows as a wrong history, hence a wrong
// next token.
package scripted

import (
	"fmt"

	"kiln/model"
)

// Model is a scripted backend. Set Vocab, Context, BlockSize and Next;
// the zero store is ready.
type Model struct {
	VocabSize int // logit row length
	Ctx       int // positions a sequence may hold
	BlockSize int // token slots per block, as the engine's Config.BlockSize

	// Next writes the logits of the token after history into row
	// ([VocabSize], zeroed before the call).
	Next func(history []int32, row []float32)
	// OnForward, when set, is called after each forward with the batch
	// (tests count, inspect or interrupt there).
	OnForward func(b *model.Batch)

	blocks map[int32][]int32 // block id -> [BlockSize] token ids, -1 where none
	logits []float32
	hist   []int32
}

// Vocab, Context: runner.Backend.
func (m *Model) Vocab() int   { return m.VocabSize }
func (m *Model) Context() int { return m.Ctx }

// Forward stores b's tokens in the blocks their tables name, then, for
// each logit row, reads its sequence's history (positions 0 up to the
// row's) back through the table and asks Next for the row.
func (m *Model) Forward(b *model.Batch) ([]float32, error) {
	if m.blocks == nil {
		m.blocks = map[int32][]int32{}
	}
	if len(b.SeqStarts) < 2 || len(b.BlockTables) != len(b.SeqStarts)-1 {
		return nil, fmt.Errorf("scripted: a batch of %d sequence starts and %d tables", len(b.SeqStarts), len(b.BlockTables))
	}
	for s := 0; s+1 < len(b.SeqStarts); s++ {
		for i := b.SeqStarts[s]; i < b.SeqStarts[s+1]; i++ {
			slot, err := m.slot(b.BlockTables[s], int(b.Positions[i]))
			if err != nil {
				return nil, err
			}
			*slot = b.Tokens[i]
		}
	}
	m.logits = m.logits[:0]
	for _, r := range b.LogitRows {
		s := 0
		for int32(r) >= b.SeqStarts[s+1] {
			s++
		}
		h, err := m.History(b.BlockTables[s], int(b.Positions[r])+1)
		if err != nil {
			return nil, err
		}
		at := len(m.logits)
		m.logits = append(m.logits, make([]float32, m.VocabSize)...)
		m.Next(h, m.logits[at:])
	}
	if m.OnForward != nil {
		m.OnForward(b)
	}
	return m.logits, nil
}

// History reads the first n tokens of the sequence with this block table
// (valid until the next call).
func (m *Model) History(table []int32, n int) ([]int32, error) {
	m.hist = m.hist[:0]
	for p := range n {
		slot, err := m.slot(table, p)
		if err != nil {
			return nil, err
		}
		if *slot < 0 {
			return nil, fmt.Errorf("scripted: position %d of a sequence was never written", p)
		}
		m.hist = append(m.hist, *slot)
	}
	return m.hist, nil
}

func (m *Model) slot(table []int32, pos int) (*int32, error) {
	if pos < 0 || pos >= m.Ctx || pos/m.BlockSize >= len(table) {
		return nil, fmt.Errorf("scripted: position %d outside the context (%d) or the block table (%d blocks)", pos, m.Ctx, len(table))
	}
	id := table[pos/m.BlockSize]
	blk := m.blocks[id]
	if blk == nil {
		blk = make([]int32, m.BlockSize)
		for i := range blk {
			blk[i] = -1
		}
		m.blocks[id] = blk
	}
	return &blk[pos%m.BlockSize], nil
}

// CopyBlock copies block src's token ids into block dst.
func (m *Model) CopyBlock(src, dst int) error {
	if m.blocks == nil {
		m.blocks = map[int32][]int32{}
	}
	if src < 0 || dst < 0 {
		return fmt.Errorf("scripted: CopyBlock(%d, %d)", src, dst)
	}
	if s := m.blocks[int32(src)]; s != nil {
		m.blocks[int32(dst)] = append([]int32(nil), s...)
	} else {
		delete(m.blocks, int32(dst))
	}
	return nil
}
