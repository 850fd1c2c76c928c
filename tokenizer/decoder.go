package tokenizer

import "unicode/utf8"

// Decoder turns a stream of token ids into text as they arrive. The text it
// returns, concatenated (Add after Add, then Flush), equals Decode of all the
// ids it was given: the first token's dummy-prefix space is dropped only where
// Decode drops it, and Decode's space tidying is applied across token
// boundaries. It returns only complete UTF-8 characters, holding back a
// character split across byte tokens, and holds back text the tidying may
// still change (a trailing space, an apostrophe and the two characters after
// it) until the next token settles it.
//
// The buffer layout (raw text, before tidying):
//
//	buf: [ context | not yet returned ............ ]
//	     0         keep                       len(buf)
//
// The context is text already returned, or fed by Prime; it is kept only as
// far as the tidying of later text looks back (one byte).
//
// A Decoder is not safe for concurrent use.
type Decoder struct {
	t      *Tokenizer
	first  bool    // the next token is the first of the text
	buf    []byte  // raw pieces; see the diagram
	keep   int     // bytes at the start of buf already accounted for
	primed int     // of those, the last ones fed by Prime and never returned
	out    []byte  // scratch: tidied text
	idx    []int32 // scratch: index in buf of each byte of out
}

// NewDecoder returns a streaming decoder for t.
func (t *Tokenizer) NewDecoder() *Decoder {
	return &Decoder{t: t, first: true}
}

// Prime feeds ids whose text is not wanted (a prompt) so that the text of
// the ids added next is decoded as their continuation: the first added token
// keeps its leading space, and space tidying sees the prompt's end. Text
// that tidying takes out of the prompt part is simply not returned; a
// character begun in the prompt and finished by added ids is returned whole.
func (d *Decoder) Prime(ids []int32) {
	for _, id := range ids {
		d.push(id)
	}
	if c := d.cut(); c > 0 {
		d.compact(c)
	}
	d.primed += len(d.buf) - d.keep
	d.keep = len(d.buf)
}

// Add appends the piece of id and returns the text that became final.
func (d *Decoder) Add(id int32) string {
	d.push(id)
	return d.emit(d.cut())
}

// Flush returns all held-back text (possibly ending in an incomplete UTF-8
// sequence, as Decode would). The decoder stays usable; text added after a
// Flush is tidied as a continuation.
func (d *Decoder) Flush() string {
	return d.emit(len(d.buf))
}

func (d *Decoder) push(id int32) {
	if d.first {
		d.first = false
		d.buf = append(d.buf, d.t.firstPiece(id)...)
		return
	}
	d.buf = append(d.buf, d.t.piece(id)...)
}

// cut returns the largest c such that the text of buf[:c] is final: it ends
// on a complete character, and no later text can change how buf[:c] is
// tidied. 0 when nothing can be released.
func (d *Decoder) cut() int {
	b := d.buf
	c := len(b)
	// Hold back a trailing sequence that may still become a character.
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				c = i
			}
			break
		}
	}
	if !d.t.cleanSpaces {
		return c
	}
	// Tidying looks from a space or an apostrophe up to two bytes ahead: cut
	// after a byte that is neither, with at least two non-space bytes since
	// the last apostrophe that follows a space, and on a character boundary.
	for ; c > d.keep; c-- {
		if c < len(b) && !utf8.RuneStart(b[c]) {
			continue
		}
		if last := b[c-1]; last == ' ' || last == '\'' {
			continue
		}
		ok, nonSpace := true, 0
		for i := c - 1; i >= 0; i-- {
			// Only an apostrophe after a space can start a rule (the
			// passes delete nothing but spaces, so its neighbour stays).
			if b[i] == '\'' && i > 0 && b[i-1] == ' ' {
				ok = nonSpace >= 2
				break
			}
			if b[i] != ' ' {
				nonSpace++
			}
		}
		if ok {
			return c
		}
	}
	return 0
}

// emit returns the text of buf[keep:c] (tidied) and drops what is no longer
// needed.
func (d *Decoder) emit(c int) string {
	if c <= d.keep {
		return ""
	}
	lo := d.keep - d.primed // bytes from here on were never returned
	var text []byte
	if d.t.cleanSpaces {
		out := append(d.out[:0], d.buf[:c]...)
		idx := d.idx[:0]
		for i := range c {
			idx = append(idx, int32(i))
		}
		n := cleanSpaces(out, idx)
		out, idx = out[:n], idx[:n]
		d.out, d.idx = out, idx
		start := 0
		for start < n && int(idx[start]) < d.keep {
			start++
		}
		start = charStart(out, start, func(j int) bool { return int(idx[j]) >= lo })
		text = out[start:]
	} else {
		start := charStart(d.buf[:c], d.keep, func(j int) bool { return j >= lo })
		text = d.buf[start:c]
	}
	s := string(text)
	d.compact(c)
	d.primed = 0
	return s
}

// charStart moves start back to the first byte of a character begun before
// it (in a primed prompt), over bytes eligible says may be returned.
func charStart(b []byte, start int, eligible func(int) bool) int {
	if start >= len(b) || utf8.RuneStart(b[start]) {
		return start
	}
	for j := start - 1; j >= 0 && j >= start-3 && eligible(j); j-- {
		if utf8.RuneStart(b[j]) {
			if b[j] >= 0xC0 && j+utf8Len(b[j]) > start {
				return j
			}
			break
		}
	}
	return start
}

// compact drops buf[:c] once it is final, keeping the context later tidying
// needs.
func (d *Decoder) compact(c int) {
	ctx := 0
	if d.t.cleanSpaces {
		ctx = min(c, 1)
	}
	n := copy(d.buf, d.buf[c-ctx:])
	d.buf = d.buf[:n]
	d.keep = ctx
	d.primed = min(d.primed, ctx)
}
