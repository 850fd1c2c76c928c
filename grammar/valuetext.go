package grammar

// valueWriter looks for a canonical text of a JSON value (no whitespace,
// object members in some order) that a matcher accepts. Grammars from
// schemas fix the member order, so a value whose members are in another
// order is tried in other orders (depth-first, with backtracking), within a
// budget of member placements so that hostile values cannot make it
// exponential; running out counts as not found.
//
// The schema compiler uses it to keep the enum values a sibling grammar
// accepts, and tests use it to feed test-suite instances to grammars.
type valueWriter struct {
	m      *Matcher
	base   int    // m.Pos() where the text starts
	buf    []byte // the text so far: buf[i] is the byte at base+i
	budget int
}

func (w *valueWriter) emit(s string) bool {
	if w.m.Advance([]byte(s)) != nil {
		return false
	}
	w.buf = append(w.buf, s...)
	return true
}

func (w *valueWriter) reset(pos int) {
	_ = w.m.Reset(pos)
	w.buf = w.buf[:pos-w.base]
}

// write emits v and then requires done(); on failure it restores the
// position and returns false.
func (w *valueWriter) write(v *jsonValue, done func() bool) bool {
	start := w.m.Pos()
	fail := func() bool {
		w.reset(start)
		return false
	}
	switch v.kind {
	case jArray:
		if !w.emit("[") {
			return fail()
		}
		var elems func(i int) bool
		elems = func(i int) bool {
			if i == len(v.arr) {
				return w.emit("]") && done()
			}
			if i > 0 && !w.emit(",") {
				return false
			}
			return w.write(v.arr[i], func() bool { return elems(i + 1) })
		}
		if !elems(0) {
			return fail()
		}
		return true
	case jObject:
		if !w.emit("{") {
			return fail()
		}
		used := make([]bool, len(v.obj))
		var members func(n int) bool
		members = func(n int) bool {
			if n == len(v.obj) {
				return w.emit("}") && done()
			}
			for i, mem := range v.obj {
				if used[i] {
					continue
				}
				if w.budget <= 0 {
					return false
				}
				w.budget--
				pos := w.m.Pos()
				head := string(appendJSONString(nil, mem.key)) + ":"
				if n > 0 {
					head = "," + head
				}
				if w.emit(head) {
					used[i] = true
					if w.write(mem.val, func() bool { return members(n + 1) }) {
						return true
					}
					used[i] = false
				}
				w.reset(pos)
			}
			return false
		}
		if !members(0) {
			return fail()
		}
		return true
	}
	text, err := canonicalText(v, false)
	if err != nil || !w.emit(text) || !done() {
		return fail()
	}
	return true
}

// acceptedText returns a text of v that p's language holds, or false.
func acceptedText(p *Program, v *jsonValue, budget int) (string, bool) {
	m, err := NewMatcher(p)
	if err != nil {
		return "", false
	}
	w := &valueWriter{m: m, budget: budget}
	if !w.write(v, m.CanEnd) {
		return "", false
	}
	return string(w.buf), true
}
