package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// tool_choice "required" constrains the reply to one schema that holds
// every tool's parameters. A tool's "$ref": "#/$defs/Addr" (what pydantic
// emits) means its own root, not that wrapper's, so each tool's parameters
// go under the wrapper's $defs as tool<i> and their local refs are rebased
// onto it: "#/$defs/Addr" becomes "#/$defs/tool0/$defs/Addr", "#" becomes
// "#/$defs/tool0". Two tools that both define an Addr keep their own.

// toolDefKey is where tool i's parameters live in the wrapper's $defs.
func toolDefKey(i int) string { return fmt.Sprintf("tool%d", i) }

// rebaseRefs returns schema with every local $ref (a string value of a
// "$ref" key in a schema position) prefixed by base, a JSON pointer
// fragment such as "#/$defs/tool0"; key order and every other byte's
// meaning are kept (the order of properties is the order generated).
// Values of const, enum, default and examples are data, not schemas, and
// are copied as they are. A root $id is dropped: below the wrapper's root
// it would change the base of refs, and refs here are local.
func rebaseRefs(schema json.RawMessage, base string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var out bytes.Buffer
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if err := rebaseValue(dec, &out, tok, base, true, true); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// dataKeywords hold JSON values, not schemas: nothing in them is a $ref.
var dataKeywords = map[string]bool{"const": true, "enum": true, "default": true, "examples": true}

// rebaseValue copies the value that starts with tok to out; schema says
// whether it sits where a schema (or a map or list of schemas) may.
func rebaseValue(dec *json.Decoder, out *bytes.Buffer, tok json.Token, base string, schema, root bool) error {
	switch tok {
	case json.Delim('{'):
		out.WriteByte('{')
		first := true
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			vt, err := dec.Token()
			if err != nil {
				return err
			}
			if root && key == "$id" {
				if _, ok := vt.(json.Delim); ok { // not a string: leave it for the compiler's error
					root = false
				} else {
					continue
				}
			}
			if !first {
				out.WriteByte(',')
			}
			first = false
			writeJSONString(out, key)
			out.WriteByte(':')
			if ref, ok := vt.(string); ok && schema && key == "$ref" && strings.HasPrefix(ref, "#") {
				writeJSONString(out, base+ref[1:])
				continue
			}
			if err := rebaseValue(dec, out, vt, base, schema && !dataKeywords[key], false); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // }
			return err
		}
		out.WriteByte('}')
	case json.Delim('['):
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			et, err := dec.Token()
			if err != nil {
				return err
			}
			if err := rebaseValue(dec, out, et, base, schema, false); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // ]
			return err
		}
		out.WriteByte(']')
	default:
		switch v := tok.(type) {
		case string:
			writeJSONString(out, v)
		case json.Number:
			out.WriteString(v.String())
		case bool:
			fmt.Fprint(out, v)
		case nil:
			out.WriteString("null")
		default:
			return fmt.Errorf("unexpected JSON token %v", tok)
		}
	}
	return nil
}

// writeJSONString writes s as a JSON string, <, > and & unescaped.
func writeJSONString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	out.Truncate(out.Len() - 1) // Encode's newline
}
