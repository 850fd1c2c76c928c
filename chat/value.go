package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/ardanlabs/jinja"
)

// toValue converts a variable from Options.Vars to a template value, the
// way the JSON-like Python objects transformers passes would look:
//
//	nil                      none
//	bool, ints, floats       True/False, int, float
//	string                   str
//	[]T (any element type)   list
//	map[string]T             dict, keys sorted (Go maps have no order)
//	json.RawMessage          decoded with its object key order kept (tools schemas)
//
// Anything else is an error naming the path to the bad value.
func toValue(path string, v any) (jinja.Value, error) {
	switch x := v.(type) {
	case nil:
		return jinja.None(), nil
	case bool:
		return jinja.NewBool(x), nil
	case string:
		return jinja.NewString(x), nil
	case int:
		return jinja.NewInt(int64(x)), nil
	case int32:
		return jinja.NewInt(int64(x)), nil
	case int64:
		return jinja.NewInt(x), nil
	case uint32:
		return jinja.NewInt(int64(x)), nil
	case float32:
		return floatValue(path, float64(x))
	case float64:
		return floatValue(path, x)
	case json.RawMessage:
		return fromJSON(path, x)
	case jinja.Value:
		return x, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		items := make([]jinja.Value, rv.Len())
		for i := range items {
			item, err := toValue(fmt.Sprintf("%s[%d]", path, i), rv.Index(i).Interface())
			if err != nil {
				return jinja.Value{}, err
			}
			items[i] = item
		}
		return jinja.NewList(items), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return jinja.Value{}, fmt.Errorf("chat: variable %s: map keys must be strings, not %s", path, rv.Type().Key())
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		d := jinja.NewDict()
		for _, k := range keys {
			item, err := toValue(path+"."+k, rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface())
			if err != nil {
				return jinja.Value{}, err
			}
			d.AsDict().Set(k, item)
		}
		return d, nil
	}
	return jinja.Value{}, fmt.Errorf("chat: variable %s has type %T, which a template cannot use (want JSON-like values)", path, v)
}

func floatValue(path string, f float64) (jinja.Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return jinja.Value{}, fmt.Errorf("chat: variable %s is %v", path, f)
	}
	return jinja.NewFloat(f), nil
}

// fromJSON decodes raw JSON into a template value, keeping object keys in
// document order (Python's json.loads does; transformers' tojson then
// prints them in that order). Integers stay ints, other numbers floats.
func fromJSON(path string, raw json.RawMessage) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeJSON(dec)
	if err != nil {
		return jinja.Value{}, fmt.Errorf("chat: variable %s: bad JSON: %w", path, err)
	}
	if _, err := dec.Token(); err == nil {
		return jinja.Value{}, fmt.Errorf("chat: variable %s: bad JSON: data after the value", path)
	}
	return v, nil
}

func decodeJSON(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Value{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			var items []jinja.Value
			for dec.More() {
				item, err := decodeJSON(dec)
				if err != nil {
					return jinja.Value{}, err
				}
				items = append(items, item)
			}
			_, err := dec.Token() // ]
			return jinja.NewList(items), err
		case '{':
			d := jinja.NewDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jinja.Value{}, err
				}
				item, err := decodeJSON(dec)
				if err != nil {
					return jinja.Value{}, err
				}
				d.AsDict().Set(kt.(string), item)
			}
			_, err := dec.Token() // }
			return d, err
		}
		return jinja.Value{}, fmt.Errorf("unexpected %v", t)
	case nil:
		return jinja.None(), nil
	case bool:
		return jinja.NewBool(t), nil
	case string:
		return jinja.NewString(t), nil
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return jinja.NewInt(i), nil
		}
		f, err := t.Float64()
		if err != nil {
			return jinja.Value{}, err
		}
		return jinja.NewFloat(f), nil
	}
	return jinja.Value{}, fmt.Errorf("unexpected token %v", tok)
}

// messagesValue builds the messages list as transformers hands it over:
// one dict per message with keys in the order role, content.
func messagesValue(msgs []Message) jinja.Value {
	items := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		d.AsDict().Set("role", jinja.NewString(m.Role))
		d.AsDict().Set("content", jinja.NewString(m.Content))
		items[i] = d
	}
	return jinja.NewList(items)
}
