package kernels

import (
	"math"

	"kiln/kernels/simd"
)

// runQuantTile is runQuant for a Q8_0 cache where simd has the tile
// kernels (simd.AttnTileQ8_0Fast): the same per-head loop, the same bits,
// with the query heads of a KV head taken four at a time through tiles of
// up to attnTileKV keys that may span pages (row offsets from the block
// table). Per tile: simd.AttnScoresQ8_0 computes every head's scores, the
// running maxima and the expf arguments, and marks the keys where a head
// meets a new maximum; one ExpfRow call; for marked keys the factor the
// accumulator is scaled by is moved out of the weights (the new maximum's
// own weight is 1); simd.AttnValuesQ8_0 adds the value rows, dequantized
// once for all heads, and the running sums.
func (t *attnTask) runQuantTile(worker, lo, hi int) {
	kv, b := t.kv, t.b
	hd, g := kv.HeadDim, t.group
	const T = attnTileKV
	ts := &t.tiles[worker]
	qrb := KVQ8_0.RowBytes(hd)
	qq := t.qq[worker][:(g+3)/4*4*qrb]
	rotK, rotV := kv.rotK(), kv.rotV()
	bs, rb := kv.BlockSize, kv.RowBytes()
	hb := kv.Type.RowBytes(hd)
	for it := lo; it < hi; it++ {
		ri, kvh := it/kv.KVHeads, it%kv.KVHeads
		t0, t1 := int(t.runs[2*ri]), int(t.runs[2*ri+1])
		table := b.Seqs[t.tokSeq[t0]].BlockTable
		for tok := t0; tok < t1; tok++ {
			pos := int(b.Positions[tok])
			row0 := (tok*b.Heads + kvh*g) * hd // the group's first query row
			for h := 0; h < g; h++ {
				q := b.Q[row0+h*hd : row0+(h+1)*hd]
				if rotK > 0 {
					copy(ts.qr[:hd], q)
					fwht(ts.qr[:hd], rotK)
					q = ts.qr[:hd]
				}
				quantizeActQ8_0(q, qq[h*qrb:(h+1)*qrb])
			}
			for h0 := 0; h0 < g; h0 += 4 {
				gg := min(4, g-h0)
				ts.q.Set(hd, qq[h0*qrb:], qrb, gg)
				inf := float32(math.Inf(-1))
				m, s := [4]float32{inf, inf, inf, inf}, [4]float32{}
				acc := ts.acc[:gg*hd]
				clear(acc)
				for j := 0; j <= pos; j += T {
					n := min(T, pos+1-j)
					offs, args, scl, ev := ts.offs[:n], ts.args[:4*n], ts.scl[:4*n], ts.ev[:n]
					for i := 0; i < n; { // one block's run of slots at a time
						p := j + i
						slot := p % bs
						o := (int(table[p/bs])*bs+slot)*rb + kvh*hb
						for range min(bs-slot, n-i) {
							offs[i] = int32(o)
							i, o = i+1, o+rb
						}
					}
					simd.AttnScoresQ8_0(&ts.q, kv.KQ, offs, t.scale, gg, &m, args, ev)
					simd.ExpfRow(args, args)
					for i, e := range ev {
						if e == 0 {
							continue
						}
						for h := range 4 {
							scl[4*i+h] = 1
							if e>>h&1 != 0 {
								scl[4*i+h], args[4*i+h] = args[4*i+h], 1
							}
						}
					}
					simd.AttnValuesQ8_0(gg, args, scl, ev, kv.VQ, offs, acc, &s)
				}
				for h := range gg {
					inv := float32(0)
					if s[h] != 0 {
						inv = 1 / s[h]
					}
					o := b.Out[row0+(h0+h)*hd : row0+(h0+h+1)*hd]
					for i, v := range acc[h*hd : (h+1)*hd] {
						o[i] = v * inv
					}
					if rotV > 0 {
						fwht(o, rotV) // back from the rotated values
					}
				}
			}
		}
	}
}

// attnTileScratch is one worker's memory for runQuantTile.
type attnTileScratch struct {
	q    simd.Q8_0Queries
	qr   []float32 // [hd] rotated query
	acc  []float32 // [4][hd] accumulators
	offs []int32   // [T] byte offsets of a tile's rows
	args []float32 // [T][4] expf arguments, then weights
	scl  []float32 // [T][4] accumulator factors at new maxima
	ev   []uint8   // [T] heads meeting a new maximum, one bit each
}

func (ts *attnTileScratch) size(hd int) {
	if len(ts.qr) < hd {
		ts.qr, ts.acc = make([]float32, hd), make([]float32, 4*hd)
	}
	if len(ts.offs) < attnTileKV {
		ts.offs, ts.ev = make([]int32, attnTileKV), make([]uint8, attnTileKV)
		ts.args, ts.scl = make([]float32, 4*attnTileKV), make([]float32, 4*attnTileKV)
	}
}

// useTiles says whether Attention over kv takes runQuantTile: a Q8_0 cache
// whose rows simd's tile kernels run fast on this kernel set, and whose
// byte offsets fit the kernels' int32s.
func (kv *PagedKV) useTiles() bool {
	return kv.Type == KVQ8_0 && simd.AttnTileQ8_0Fast(kv.HeadDim) && len(kv.KQ) <= math.MaxInt32 && len(kv.VQ) <= math.MaxInt32
}
