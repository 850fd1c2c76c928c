package tokenizer

// wordCache remembers the tokens of recently seen words (BPE pre-tokenizer
// words, SPM chunks): natural text repeats words, and a hit skips the merge
// loop. Tokenization of a word does not depend on its context, so a hit is
// exactly what the merge loop would give. One cache lives in each pooled
// session, so it needs no lock; it is emptied when it grows past its bounds.
//
//	words: "▁the" → span{off, n} → ids[off:off+n]
type wordCache struct {
	words map[string]span
	ids   []int32 // token ids of all cached words, back to back
}

type span struct{ off, n int32 }

const (
	cacheMaxWords = 1 << 14 // entries before the cache is emptied
	cacheMaxIDs   = 1 << 18 // stored ids before the cache is emptied
	cacheMaxWord  = 64      // longer words are not cached (rarely repeat)
)

// get appends the cached tokens of word to out.
func (c *wordCache) get(out []int32, word []byte) ([]int32, bool) {
	if len(word) > cacheMaxWord || c.words == nil {
		return out, false
	}
	sp, ok := c.words[string(word)]
	if !ok {
		return out, false
	}
	return append(out, c.ids[sp.off:sp.off+sp.n]...), true
}

// put caches the tokens of word.
func (c *wordCache) put(word []byte, ids []int32) {
	if len(word) > cacheMaxWord {
		return
	}
	if c.words == nil || len(c.words) >= cacheMaxWords || len(c.ids)+len(ids) > cacheMaxIDs {
		if c.words == nil {
			c.words = make(map[string]span, 1024)
		} else {
			clear(c.words)
		}
		c.ids = c.ids[:0]
	}
	c.words[string(word)] = span{off: int32(len(c.ids)), n: int32(len(ids))}
	c.ids = append(c.ids, ids...)
}
