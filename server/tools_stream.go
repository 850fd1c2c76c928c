package server

import (
	"encoding/json"
	"slices"
	"strings"
)

// Streaming a reply's tool calls as they are generated, as vLLM streams
// them: a call's first delta carries its index, id, type and name (once
// the name is whole), later deltas the next bytes of its arguments. The
// arguments streamed are exactly the bytes of the call's JSON value in
// the reply, so their concatenation is the arguments a whole
// (non-streamed) response gives. Every tool mode streams so: a
// constrained reply (required, named) from its first byte; an auto reply
// from where a call starts (chatWriter.release), in the format its
// template teaches (hermes <tool_call> blocks, mistral's [TOOL_CALLS]
// list, llama3's JSON objects). Chat, Responses and Messages streams all
// send these deltas (chatWriter.add computes them), each in its own events.
//
// An auto call is announced once its name is whole. Should the reply then
// not parse as calls after all (cut off by max_tokens, or malformed), what
// was announced stands: the stream's calls are those it sent (vLLM's
// streaming parsers cannot take a delta back either), and the held text
// is not sent as content.

// partialCall is one call of a reply so far.
type partialCall struct {
	name string // "" until the name is whole
	args string // the arguments' JSON text so far
}

// partialCalls reads the calls of a tool-using reply prefix, at most m.max
// of them (0: no bound). For a named tool choice the reply is the
// arguments (leading whitespace skipped, the text after the value
// dropped); for a required one it is vLLM's list [{"name": N,
// "parameters": {...}}, ...]; an auto reply is read in m.format
// (autoPartialCalls).
func partialCalls(m *toolMode, text string) []partialCall {
	var out []partialCall
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
		out = partialList(text, skipJSONSpace(text, 0), "parameters")
	case "auto":
		out = autoPartialCalls(m.format, text)
	}
	if m.max > 0 && len(out) > m.max {
		out = out[:m.max]
	}
	return out
}

// autoPartialCalls reads an auto reply prefix that starts as a call
// (mayBeCall) in format, as toolMode.parse reads the whole reply:
//
//	hermes   <tool_call>{"name": N, "arguments": {...}}</tool_call>, repeated
//	mistral  [TOOL_CALLS] [{"name": N, "arguments": {...}}, ...]
//	llama3   [<|python_tag|>] {"name": N, "parameters": {...}}; ...
//
// Reading stops at the first text that is not part of a call (it may
// become content once the reply is whole).
func autoPartialCalls(format, text string) []partialCall {
	i := skipJSONSpace(text, 0)
	switch format {
	case "mistral":
		j, ok := skipTag(text, i, "[TOOL_CALLS]")
		if !ok {
			return nil
		}
		return partialList(text, skipJSONSpace(text, j), "arguments")
	case "llama3":
		if j, ok := skipTag(text, i, "<|python_tag|>"); ok {
			i = skipJSONSpace(text, j)
		}
		var out []partialCall
		for {
			pc, end := partialObject(text, i, "parameters", "arguments")
			out = appendNamed(out, pc)
			if end < 0 {
				return out
			}
			i = skipJSONSpace(text, end)
			if i >= len(text) || text[i] != ';' {
				return out
			}
			i = skipJSONSpace(text, i+1)
		}
	}
	var out []partialCall
	for {
		j, ok := skipTag(text, i, "<tool_call>")
		if !ok {
			return out
		}
		pc, end := partialObject(text, skipJSONSpace(text, j), "arguments")
		out = appendNamed(out, pc)
		if end < 0 {
			return out
		}
		if j, ok = skipTag(text, skipJSONSpace(text, end), "</tool_call>"); !ok {
			return out
		}
		i = skipJSONSpace(text, j)
	}
}

// skipTag returns the index past tag when text[i:] starts with it.
func skipTag(text string, i int, tag string) (int, bool) {
	if i > len(text) || !strings.HasPrefix(text[i:], tag) {
		return i, false
	}
	return i + len(tag), true
}

// partialList reads a JSON list of call objects starting at text[i]
// ('['), each {"name": N, argsKey: {...}} (keys in any order, others
// skipped).
func partialList(text string, i int, argsKey string) []partialCall {
	var out []partialCall
	if i >= len(text) || text[i] != '[' {
		return nil
	}
	i++
	for {
		i = skipJSONSpace(text, i)
		if i < len(text) && text[i] == ',' {
			i = skipJSONSpace(text, i+1)
		}
		pc, end := partialObject(text, i, argsKey)
		out = appendNamed(out, pc)
		if end < 0 {
			return out
		}
		i = end
	}
}

// partialObject reads the call object starting at text[i] ('{'): its
// "name" once whole, and the first of argsKeys' value so far. end is the
// index past the object, or -1 when text ends inside it (or holds no
// object at i).
func partialObject(text string, i int, argsKeys ...string) (pc partialCall, end int) {
	if i >= len(text) || text[i] != '{' {
		return pc, -1
	}
	i++
	argsRank := len(argsKeys) // the rank in argsKeys of the key pc.args came from
	for {
		i = skipJSONSpace(text, i)
		if i >= len(text) {
			return pc, -1
		}
		switch text[i] {
		case '}':
			return pc, i + 1
		case ',':
			i++
			continue
		}
		keyEnd := jsonValueEnd(text, i)
		if keyEnd < 0 || text[i] != '"' {
			return pc, -1
		}
		key := text[i+1 : keyEnd-1]
		i = skipJSONSpace(text, keyEnd)
		if i >= len(text) || text[i] != ':' {
			return pc, -1
		}
		i = skipJSONSpace(text, i+1)
		if i >= len(text) {
			return pc, -1
		}
		end := jsonValueEnd(text, i)
		rank := slices.Index(argsKeys, key)
		switch {
		case key == "name":
			if end < 0 {
				return pc, -1
			}
			pc.name = unquoteJSON(text[i:end])
		case rank >= 0 && rank <= argsRank:
			argsRank = rank
			if end < 0 {
				pc.args = text[i:]
				return pc, -1
			}
			pc.args = text[i:end]
		default:
			if end < 0 {
				return pc, -1
			}
		}
		i = end
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
	sent []toolCall // per call announced: its id, name and the arguments sent so far
}

// deltas returns the tool_calls deltas that bring the stream up to calls.
// A call's arguments only grow: should calls[k]'s not extend what was
// sent (a reply that turned out to parse otherwise), nothing more is sent
// for it.
func (cs *callStream) deltas(calls []partialCall) []toolCall {
	var out []toolCall
	for k, pc := range calls {
		d := toolCall{Index: k}
		if k == len(cs.sent) { // announced: id, type and name with its first arguments
			cs.sent = append(cs.sent, toolCall{Index: k, ID: newID("call_"), Type: "function", Function: toolFunction{Name: pc.name}})
			d.ID, d.Type, d.Function.Name = cs.sent[k].ID, "function", pc.name
		}
		sent := &cs.sent[k].Function.Arguments
		if len(pc.args) > len(*sent) && strings.HasPrefix(pc.args, *sent) {
			d.Function.Arguments = pc.args[len(*sent):]
			*sent = pc.args
		} else if d.ID == "" {
			continue // nothing new for this call
		}
		out = append(out, d)
	}
	return out
}

// finish returns the deltas that complete the stream's calls to the
// reply's final ones (nil: it parsed as none; a reply cut off by
// max_tokens is read as generated so far), and the calls the stream has
// then sent, with the ids its deltas gave them.
func (cs *callStream) finish(m *toolMode, final []toolCall, text string) (deltas, sent []toolCall) {
	var target []partialCall
	if final != nil {
		target = make([]partialCall, len(final))
		for k, c := range final {
			target[k] = partialCall{name: c.Function.Name, args: c.Function.Arguments}
		}
	} else {
		target = partialCalls(m, text)
	}
	deltas = cs.deltas(target)
	return deltas, slices.Clone(cs.sent)
}
