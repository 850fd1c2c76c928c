package server

import "encoding/json"

// Streaming a constrained reply's tool calls as they are generated, as
// vLLM streams them: a call's first delta carries its index, id, type and
// name (once the name is whole), later deltas the next bytes of its
// arguments. The arguments streamed are exactly the bytes of the call's
// JSON value in the reply, so their concatenation is the arguments a
// whole (non-streamed) response gives. Auto mode still sends a call whole
// when its completion ends: its text is the model's own format, which may
// turn out not to be a call.

// partialCall is one call of a constrained reply so far.
type partialCall struct {
	name string // "" until the name is whole
	args string // the arguments' JSON text so far
}

// partialCalls reads the calls of a constrained reply prefix: for a named
// tool choice the reply is the arguments (leading whitespace skipped, the
// text after the value dropped); for a required one it is vLLM's list
// [{"name": N, "parameters": {...}}, ...] (the grammar writes the keys in
// that order; others are skipped).
func partialCalls(m *toolMode, text string) []partialCall {
	switch m.kind {
	case "named":
		i := skipJSONSpace(text, 0)
		if i == len(text) {
			return nil
		}
		end := jsonValueEnd(text, i)
		if end < 0 {
			end = len(text)
		}
		return []partialCall{{name: m.name, args: text[i:end]}}
	case "required":
		return requiredPartialCalls(text)
	}
	return nil
}

func requiredPartialCalls(text string) []partialCall {
	var out []partialCall
	i := skipJSONSpace(text, 0)
	if i >= len(text) || text[i] != '[' {
		return nil
	}
	i++
	for {
		i = skipJSONSpace(text, i)
		if i >= len(text) || text[i] == ']' {
			return out
		}
		if text[i] == ',' {
			i = skipJSONSpace(text, i+1)
		}
		if i >= len(text) || text[i] != '{' {
			return out
		}
		i++
		var pc partialCall
		open := true // the element's object is not closed yet
		for open {
			i = skipJSONSpace(text, i)
			if i >= len(text) {
				return appendNamed(out, pc)
			}
			switch text[i] {
			case '}':
				i++
				open = false
				continue
			case ',':
				i++
				continue
			}
			keyEnd := jsonValueEnd(text, i)
			if keyEnd < 0 || text[i] != '"' {
				return appendNamed(out, pc)
			}
			key := text[i+1 : keyEnd-1]
			i = skipJSONSpace(text, keyEnd)
			if i >= len(text) || text[i] != ':' {
				return appendNamed(out, pc)
			}
			i = skipJSONSpace(text, i+1)
			if i >= len(text) {
				return appendNamed(out, pc)
			}
			end := jsonValueEnd(text, i)
			switch key {
			case "name":
				if end < 0 {
					return appendNamed(out, pc)
				}
				pc.name = unquoteJSON(text[i:end])
			case "parameters":
				if end < 0 {
					pc.args = text[i:]
					return appendNamed(out, pc)
				}
				pc.args = text[i:end]
			default:
				if end < 0 {
					return appendNamed(out, pc)
				}
			}
			i = end
		}
		out = appendNamed(out, pc)
	}
}

// appendNamed adds pc when its name is known (a call is announced by its
// name).
func appendNamed(out []partialCall, pc partialCall) []partialCall {
	if pc.name == "" {
		return out
	}
	return append(out, pc)
}

func skipJSONSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd returns the index just past the JSON value starting at
// s[i], or -1 when s ends inside it. s is a prefix of valid JSON (the
// grammar's), so only strings and nesting need tracking; a number or
// literal ends at the next delimiter, unknown while s ends first.
func jsonValueEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case '"':
			for j++; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return -1
			}
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
			if depth < 0 {
				return j // the container around a scalar closes
			}
		case ',', ' ', '\n', '\t', '\r', ':':
			if depth == 0 {
				return j // a number or literal ended
			}
		}
	}
	return -1
}

// unquoteJSON decodes a JSON string literal ("" for anything else).
func unquoteJSON(s string) string {
	var out string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return ""
	}
	return out
}

// callStream is what a choice's stream has sent of its calls.
type callStream struct {
	ids  []string // per call, the id its first delta carried
	sent []int    // per call, the bytes of its arguments sent
}

// deltas returns the tool_calls deltas that bring the stream up to calls.
func (cs *callStream) deltas(calls []partialCall) []toolCall {
	var out []toolCall
	for k, pc := range calls {
		d := toolCall{Index: k}
		if k == len(cs.ids) { // announced: id, type and name with its first arguments
			cs.ids = append(cs.ids, newID("call_"))
			cs.sent = append(cs.sent, 0)
			d.ID, d.Type, d.Function.Name = cs.ids[k], "function", pc.name
		}
		if len(pc.args) > cs.sent[k] {
			d.Function.Arguments = pc.args[cs.sent[k]:]
			cs.sent[k] = len(pc.args)
		} else if d.ID == "" {
			continue // nothing new for this call
		}
		out = append(out, d)
	}
	return out
}
