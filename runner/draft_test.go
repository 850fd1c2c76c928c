package runner

import "testing"

// TestScratchBlocks: an ask's scratch blocks, from the block of its last
// known token (position n-1) to the block of its last drafted position
// (n+m-2, m <= k), never exceed its share of ScratchBlocks, wherever n
// falls in a block; and the bound is reached (a smaller one would not do).
func TestScratchBlocks(t *testing.T) {
	for bs := 1; bs <= 8; bs++ {
		for k := 1; k <= 16; k++ {
			c := DrafterConfig{Tokens: k, BlockSize: bs, NumBlocks: 10, MaxAsks: 3}
			per := c.ScratchBlocks() / c.MaxAsks
			most := 0
			for n := 1; n <= 4*bs; n++ {
				for m := 1; m <= k; m++ {
					used := (n+m-2)/bs - (n-1)/bs + 1 // blocks of positions n-1 .. n+m-2
					most = max(most, used)
				}
			}
			if most != per {
				t.Errorf("block size %d, k=%d: an ask needs up to %d scratch blocks, ScratchBlocks gives %d each", bs, k, most, per)
			}
		}
	}
}
