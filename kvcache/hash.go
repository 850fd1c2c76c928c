package kvcache

// rootHash is the parent hash of a sequence's first block (the FNV-1a
// 64-bit offset basis).
const rootHash uint64 = 14695981039346656037

const fnvPrime uint64 = 1099511628211

// hashBlock chains a full block's token ids onto its parent block's hash:
// FNV-1a over the parent hash's 8 bytes and each token's 4 bytes, little
// endian. Two blocks hash alike only if their whole prefixes do (up to
// collisions, which a hit rules out by comparing tokens and parent hash).
func hashBlock(parent uint64, tokens []int32) uint64 {
	h := rootHash
	for i := 0; i < 8; i++ {
		h ^= (parent >> (8 * i)) & 0xff
		h *= fnvPrime
	}
	for _, t := range tokens {
		u := uint32(t)
		for i := 0; i < 4; i++ {
			h ^= uint64(u>>(8*i)) & 0xff
			h *= fnvPrime
		}
	}
	return h
}
