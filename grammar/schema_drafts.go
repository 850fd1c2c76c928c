package grammar

// Drafts 4 to 2019-09 wrote some keywords in forms 2020-12 replaced; real
// schemas still use them. Before compiling, they are rewritten in place to
// the 2020-12 form (the old forms are invalid in 2020-12, so the rewrite
// never changes a 2020-12 schema's meaning):
//
//	"items": [A, B] with "additionalItems": C  → "prefixItems": [A, B], "items": C
//	"maximum": m, "exclusiveMaximum": true     → "exclusiveMaximum": m (draft 4; false: dropped)
//	"minimum": m, "exclusiveMinimum": true     → "exclusiveMinimum": m
//
// definitions, dependencies and "$id": "#name" are read as they are
// (schema_merge.go, schema_rewrite.go, schema_uri.go).

// normalizeDrafts rewrites the old forms throughout the document's schemas.
func normalizeDrafts(s *jsonValue, depth int) {
	if s == nil || s.kind != jObject || depth > maxJSONDepth {
		return
	}
	if it := s.get("items"); it != nil && it.kind == jArray && s.get("prefixItems") == nil {
		add := s.get("additionalItems")
		var out []jsonMember
		for _, m := range s.obj {
			switch m.key {
			case "items":
				out = append(out, jsonMember{"prefixItems", m.val})
				if add != nil {
					out = append(out, jsonMember{"items", add})
				}
			case "additionalItems":
			default:
				out = append(out, m)
			}
		}
		s.obj = out
	}
	for _, p := range [][2]string{{"maximum", "exclusiveMaximum"}, {"minimum", "exclusiveMinimum"}} {
		ex := s.get(p[1])
		if ex == nil || ex.kind != jBool {
			continue
		}
		var out []jsonMember
		for _, m := range s.obj {
			switch {
			case m.key == p[1]:
			case m.key == p[0] && ex.b:
				out = append(out, jsonMember{p[1], m.val})
			default:
				out = append(out, m)
			}
		}
		s.obj = out
	}
	for _, kw := range subschemaOne {
		if v := s.get(kw); v != nil {
			normalizeDrafts(v, depth+1)
		}
	}
	for _, kw := range subschemaMap {
		if v := s.get(kw); v != nil && v.kind == jObject {
			for _, m := range v.obj {
				normalizeDrafts(m.val, depth+1)
			}
		}
	}
	for _, kw := range subschemaList {
		if v := s.get(kw); v != nil && v.kind == jArray {
			for _, x := range v.arr {
				normalizeDrafts(x, depth+1)
			}
		}
	}
}
