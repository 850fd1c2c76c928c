package model_test

import (
	"strconv"
	"strings"
	"testing"

	"kiln/kernels"
	"kiln/model"
)

// newTestKV builds a cache of layers pages directly (no model needed).
func newTestKV(layers, numBlocks, blockSize, kvHeads, headDim int, typ kernels.KVType) *model.KVStore {
	kv := &model.KVStore{BlockSize: blockSize, NumBlocks: numBlocks, Type: typ}
	for i := 0; i < layers; i++ {
		kv.Layers = append(kv.Layers, kernels.NewPagedKV(numBlocks, blockSize, kvHeads, headDim, typ))
	}
	return kv
}

// fill stores distinct values into every slot of block blk of every layer.
func fill(t *testing.T, kv *model.KVStore, blk int, base float32) {
	t.Helper()
	for li, l := range kv.Layers {
		w := l.KVHeads * l.HeadDim
		table := make([]int32, blk+1)
		table[blk] = int32(blk)
		var pos []int32
		k := make([]float32, kv.BlockSize*w)
		v := make([]float32, kv.BlockSize*w)
		for s := 0; s < kv.BlockSize; s++ {
			pos = append(pos, int32(blk*kv.BlockSize+s))
		}
		for i := range k {
			k[i] = base + float32(li*1000+i%37) + float32(i)/64
			v[i] = -k[i]
		}
		if err := l.Store(table, pos, k, v); err != nil {
			t.Fatal(err)
		}
	}
}

// allKVTypes are the cache types, for tests over each.
var allKVTypes = []kernels.KVType{kernels.KVF16, kernels.KVF32, kernels.KVQ8_0, kernels.KVQ4_0}

func TestCopyBlock(t *testing.T) {
	for _, typ := range allKVTypes {
		kv := newTestKV(3, 5, 4, 2, 32, typ)
		fill(t, kv, 1, 1)
		fill(t, kv, 3, 500)
		fill(t, kv, 4, 900)
		before := snapshot(kv)
		if err := kv.CopyBlock(1, 3); err != nil {
			t.Fatal(err)
		}
		after := snapshot(kv)
		for li := range kv.Layers {
			for b := 0; b < kv.NumBlocks; b++ {
				want := before[li][b]
				if b == 3 {
					want = before[li][1]
				}
				if after[li][b] != want {
					t.Errorf("%s layer %d block %d: contents %v, want %v", typ, li, b, after[li][b], want)
				}
			}
		}
		if before[0][1] == before[0][3] {
			t.Fatal("test fill did not make blocks differ")
		}
		for _, bad := range [][2]int{{-1, 0}, {0, 5}, {5, 0}, {0, -1}} {
			if err := kv.CopyBlock(bad[0], bad[1]); err == nil {
				t.Errorf("CopyBlock(%d, %d) on 5 blocks: no error", bad[0], bad[1])
			}
		}
		if got := snapshot(kv); got[0][0] != after[0][0] || got[2][4] != after[2][4] {
			t.Error("a rejected CopyBlock wrote")
		}
	}
}

// snapshot returns each layer's blocks as strings of their K and V elements.
func snapshot(kv *model.KVStore) [][]string {
	var out [][]string
	for _, l := range kv.Layers {
		n := l.BlockSize * l.KVHeads * l.HeadDim
		var blocks []string
		for b := 0; b < l.NumBlocks; b++ {
			var s []byte
			switch l.Type {
			case kernels.KVF16:
				for i := b * n; i < (b+1)*n; i++ {
					s = append(s, byte(l.K16[i]), byte(l.K16[i]>>8), byte(l.V16[i]), byte(l.V16[i]>>8))
				}
			case kernels.KVQ8_0, kernels.KVQ4_0:
				nb := l.BlockSize * l.RowBytes()
				s = append(append(s, l.KQ[b*nb:(b+1)*nb]...), l.VQ[b*nb:(b+1)*nb]...)
			default:
				for i := b * n; i < (b+1)*n; i++ {
					s = strconv.AppendFloat(s, float64(l.K32[i]), 'g', -1, 32)
					s = strconv.AppendFloat(append(s, ','), float64(l.V32[i]), 'g', -1, 32)
					s = append(s, ';')
				}
			}
			blocks = append(blocks, string(s))
		}
		out = append(out, blocks)
	}
	return out
}

func TestBytesPerBlock(t *testing.T) {
	c := model.Config{Layers: 3, KVHeads: 2, HeadDim: 64}
	// Bytes per token slot of one layer's K (2 heads of 64): f16 256,
	// f32 512, q8_0 4 blocks of 34, q4_0 4 of 18.
	want := map[kernels.KVType]int{kernels.KVF16: 256, kernels.KVF32: 512, kernels.KVQ8_0: 136, kernels.KVQ4_0: 72}
	for _, typ := range allKVTypes {
		kv := newTestKV(3, 5, 4, 2, 64, typ)
		var total int
		for _, l := range kv.Layers {
			total += 2*len(l.K16) + 2*len(l.V16) + 4*len(l.K32) + 4*len(l.V32) + len(l.KQ) + len(l.VQ)
		}
		if got, want := kv.BytesPerBlock(), total/kv.NumBlocks; got != want {
			t.Errorf("%s: BytesPerBlock %d, want %d (allocated %d bytes over %d blocks)", typ, got, want, total, kv.NumBlocks)
		}
		if got, want := c.KVBytesPerBlock(4, typ), kv.BytesPerBlock(); got != want {
			t.Errorf("%s: Config.KVBytesPerBlock %d, cache's BytesPerBlock %d", typ, got, want)
		}
		if got, want := c.KVBytesPerToken(typ), 2*3*want[typ]; got != want {
			t.Errorf("%s: KVBytesPerToken %d, want %d", typ, got, want)
		}
	}
}

// TestKVTypeHeadDim: a quantized cache over heads not a multiple of 32
// (stories260K's are 8 wide) is refused naming both numbers; f16 and f32
// take any head size.
func TestKVTypeHeadDim(t *testing.T) {
	c := model.Config{Layers: 5, KVHeads: 4, HeadDim: 8}
	for _, typ := range allKVTypes {
		err := c.CheckKVType(typ)
		if !typ.Quantized() {
			if err != nil {
				t.Errorf("%s over heads of 8: %v", typ, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "32") || !strings.Contains(err.Error(), " 8 ") || !strings.Contains(err.Error(), typ.String()) {
			t.Errorf("%s over heads of 8: error %v, want one naming %s, 32 and 8", typ, err, typ)
		}
	}
	if err := c.CheckKVType(kernels.KVType(200)); err == nil {
		t.Error("an unknown KV type was accepted")
	}
}
