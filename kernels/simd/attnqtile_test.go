package simd

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// recipeAttnTileQ8_0 is AttnScoresQ8_0, the caller's expf and event
// bookkeeping (kernels.runQuant) and AttnValuesQ8_0 spelled out one head at
// a time from the one-row primitives (DotQ8_0Q8_0's generic order, Expf,
// Scale, recipeAxpyQ): the loop of llama.cpp's flash attention per head.
func recipeAttnTileQ8_0(nb int, qq []byte, g int, k, v []byte, offs []int32, scale float32, m, s *[4]float32, acc []float32) {
	rb := nb * bytesQ8_0
	d := nb * qk
	for h := range g {
		for _, o := range offs {
			x := dotQ8_0Q8_0Generic(nb, k[o:int(o)+rb], qq[h*rb:]) * scale
			w := float32(0)
			if x > m[h] {
				f := Expf(m[h] - x)
				m[h] = x
				Scale(f, acc[h*d:(h+1)*d])
				s[h] = float32(s[h]*f) + 1
				w = 1
			} else {
				w = Expf(x - m[h])
				s[h] = float32(s[h]*1) + w
			}
			recipeAxpyQ(false, []float32{w}, v[o:int(o)+rb], rb, acc[h*d:(h+1)*d])
		}
	}
}

// TestAttnTileQ8_0: scores, expf, events and values over a tile of
// scattered rows give the per-head recipe's bits under every kernel set,
// for 1..4 heads, 1..4 blocks per row (the assembly takes even counts, the
// others the reference), every generator mode, several tiles in a row (the
// running maxima and sums carried over) and zero or -inf start maxima.
func TestAttnTileQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(123, 124))
	f := formats["Q8_0"]
	for _, mode := range modes {
		for _, nb := range []int{1, 2, 3, 4} {
			rb := nb * bytesQ8_0
			for g := 1; g <= 4; g++ {
				const rows = 40
				stride := rb + 7
				k, v := make([]byte, rows*stride), make([]byte, rows*stride)
				for j := range rows {
					copy(k[j*stride:], genRow(r, f, nb, mode))
					copy(v[j*stride:], genRow(r, f, nb, "random"))
				}
				qq := make([]byte, 4*rb)
				for h := range 4 {
					copy(qq[h*rb:], genRow(r, f, nb, "random"))
				}
				offs := make([]int32, 2*rows) // two tiles of rows keys in a scattered order
				for i := range offs {
					offs[i] = int32(r.IntN(rows) * stride)
				}
				scale := float32(0.125)
				acc0 := randF32(r, g*nb*qk, 1)
				wantAcc := append([]float32(nil), acc0...)
				wm := [4]float32{float32(math.Inf(-1)), 0, float32(math.Inf(-1)), -1}
				ws := [4]float32{0, 2, 0, 1}
				m0, s0 := wm, ws
				recipeAttnTileQ8_0(nb, qq, g, k, v, offs, scale, &wm, &ws, wantAcc)
				bothImpls(t, func(t *testing.T, impl string) {
					var q Q8_0Queries
					q.Set(nb*qk, qq, rb, g)
					acc := append([]float32(nil), acc0...)
					m, s := m0, s0
					args, scl, ev := make([]float32, 4*rows), make([]float32, 4*rows), make([]uint8, rows)
					for t0 := 0; t0 < len(offs); t0 += rows {
						o := offs[t0 : t0+rows]
						AttnScoresQ8_0(&q, k, o, scale, g, &m, args, ev)
						ExpfRow(args, args)
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
						AttnValuesQ8_0(g, args, scl, ev, v, o, acc, &s)
					}
					for h := range g {
						if !sameBits(m[h], wm[h]) || !sameBits(s[h], ws[h]) {
							t.Fatalf("%s %s nb=%d g=%d head %d: max %g sum %g, recipe %g %g", impl, mode, nb, g, h, m[h], s[h], wm[h], ws[h])
						}
					}
					for i := range acc {
						if !sameBits(acc[i], wantAcc[i]) {
							t.Fatalf("%s %s nb=%d g=%d: acc[%d] = %g, recipe %g", impl, mode, nb, g, i, acc[i], wantAcc[i])
						}
					}
				})
			}
		}
	}
}

// TestAttnTileQ8_0BadShapesPanic: offsets outside the cache and short
// outputs are refused before any row is read.
func TestAttnTileQ8_0BadShapesPanic(t *testing.T) {
	var q Q8_0Queries
	q.Set(64, make([]byte, 4*68), 68, 4)
	k := make([]byte, 3*68)
	var m, s [4]float32
	for name, f := range map[string]func(){
		"offset past the end": func() {
			AttnScoresQ8_0(&q, k, []int32{0, 2*68 + 1}, 1, 4, &m, make([]float32, 8), make([]uint8, 2))
		},
		"negative offset": func() {
			AttnValuesQ8_0(2, make([]float32, 4), make([]float32, 4), make([]uint8, 1), k, []int32{-1}, make([]float32, 128), &s)
		},
		"short args": func() { AttnScoresQ8_0(&q, k, []int32{0, 0}, 1, 4, &m, make([]float32, 7), make([]uint8, 2)) },
		"five heads": func() { q.Set(64, make([]byte, 5*68), 68, 5) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkAttnTileQ8_0: the scores and values halves, and ExpfRow of
// their arguments, over 2048 key rows of 3 KV heads (SmolLM2-135M's
// attention: head 64, 3 query heads per KV head), in tiles of 64;
// cpu-ns/key is thread CPU time per key for all three heads.
func BenchmarkAttnTileQ8_0(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	f := formats["Q8_0"]
	const keys, nb, g, T = 2048, 2, 3, 64
	rb := nb * bytesQ8_0
	stride := 3 * rb
	k, v := make([]byte, keys*stride), make([]byte, keys*stride)
	for j := range 3 * keys {
		copy(k[j*rb:], genRow(r, f, nb, "random"))
		copy(v[j*rb:], genRow(r, f, nb, "random"))
	}
	qq := make([]byte, 4*rb)
	for h := range 4 {
		copy(qq[h*rb:], genRow(r, f, nb, "random"))
	}
	offs := make([]int32, keys)
	for i := range offs {
		offs[i] = int32(i * stride)
	}
	args, scl, ev := make([]float32, 4*T), make([]float32, 4*T), make([]uint8, T)
	acc := make([]float32, g*nb*qk)
	perKey := func(b *testing.B, f func()) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0, ok := threadCPUTime()
		for b.Loop() {
			f()
		}
		if c1, ok1 := threadCPUTime(); ok && ok1 && b.N > 0 {
			b.ReportMetric(float64(c1-c0)/float64(b.N*keys), "cpu-ns/key")
		}
	}
	benchImpls(b, func(b *testing.B) {
		var q Q8_0Queries
		q.Set(nb*qk, qq, rb, g)
		b.Run("scores", func(b *testing.B) {
			perKey(b, func() {
				m := [4]float32{-1e30, -1e30, -1e30, -1e30}
				for t0 := 0; t0 < keys; t0 += T {
					AttnScoresQ8_0(&q, k, offs[t0:t0+T], 0.125, g, &m, args, ev)
				}
			})
		})
		b.Run("values", func(b *testing.B) {
			for i := range args {
				args[i] = 0.5
			}
			clear(ev)
			perKey(b, func() {
				var s [4]float32
				for t0 := 0; t0 < keys; t0 += T {
					AttnValuesQ8_0(g, args, scl, ev, v, offs[t0:t0+T], acc, &s)
				}
			})
		})
		b.Run("expf", func(b *testing.B) {
			x := make([]float32, 4*T)
			for i := range x {
				x[i] = -float32(i) / 16
			}
			perKey(b, func() {
				for t0 := 0; t0 < keys; t0 += T {
					ExpfRow(args, x)
				}
			})
		})
	})
}
