package grammar

// A token mask is a bitset over token ids: bit id%64 of word id/64 is set
// when token id is allowed. MaskWords gives the length for a vocabulary.

// MaskWords returns the number of uint64 words of a mask over n tokens.
func MaskWords(n int) int { return (n + 63) / 64 }

func setBit(m []uint64, id int32) { m[id>>6] |= 1 << (uint(id) & 63) }

// MaskHas reports whether token id is allowed by mask m.
func MaskHas(m []uint64, id int32) bool {
	return id >= 0 && int(id>>6) < len(m) && m[id>>6]&(1<<(uint(id)&63)) != 0
}
