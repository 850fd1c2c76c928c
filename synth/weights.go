package synth

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// tensorKey is the ChaCha8 key of a tensor: SHA-256 of a domain tag, the
// seed and the tensor's name. Each tensor's values depend only on (seed,
// name), not on which tensors precede it.
func tensorKey(seed uint64, name string) [32]byte {
	h := sha256.New()
	h.Write([]byte("kiln/synth/v1\x00"))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(name))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return key
}

// rowRand is the stream of row `row` of a tensor: its key with the row
// number folded into the last 8 bytes, so rows can be drawn in any order
// and in parallel.
func rowRand(key [32]byte, row uint64) *rand.Rand {
	x := binary.LittleEndian.Uint64(key[24:]) ^ row
	binary.LittleEndian.PutUint64(key[24:], x)
	return rand.New(rand.NewChaCha8(key))
}

// fillRow writes row `row` of t (len(dst) = t.Shape[0] values) for the
// tensor key.
func (t *Tensor) fillRow(key [32]byte, row int, dst []float32) {
	if t.Fixed != nil {
		copy(dst, t.Fixed[row*len(dst):])
		return
	}
	r := rowRand(key, uint64(row))
	for i := range dst {
		dst[i] = float32(t.Mean + t.Std*r.NormFloat64())
	}
}
