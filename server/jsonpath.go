package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// pathAt names the value of a JSON document that ends at or spans byte
// offset off, as a request field path: "messages[2].content",
// "structured_outputs.choice[0]". encoding/json's type errors carry the
// Go field names without list indexes ("samplingRequest.structuredRequest.
// guided_choice", "messages.content"), which are no field of the API; their
// Offset is exact, so the path is recovered by walking the body to it.
// "" is the whole document.
func pathAt(body []byte, off int64) string {
	type frame struct {
		array   bool
		n       int    // arrays: the index of the current element
		key     string // objects: the key of the current member
		wantKey bool   // objects: the next token is a key (or the end)
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			switch {
			case f.array:
				b.WriteString("[" + strconv.Itoa(f.n) + "]")
			case !f.wantKey:
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			}
		}
		return b.String()
	}
	// done moves the innermost container past the value just read.
	done := func() {
		if len(stack) == 0 {
			return
		}
		if top := &stack[len(stack)-1]; top.array {
			top.n++
		} else {
			top.wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return path()
		}
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].wantKey = k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if dec.InputOffset() >= off { // the error is this container itself
				return path()
			}
			stack = append(stack, frame{array: tok == json.Delim('['), wantKey: tok == json.Delim('{')})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			done()
			continue
		}
		if dec.InputOffset() >= off {
			return path()
		}
		done()
	}
}
