package grammar

import (
	"net/url"
	"strings"
)

// References by URI inside one document: $id (which sets the base URI of
// its subschema), $anchor and $dynamicAnchor name schemas, and a $ref is a
// URI reference resolved against the base URI of the schema that holds it.
// Before compiling, every $ref (and $dynamicRef, below) whose target lies
// in the document is rewritten in place as the local JSON pointer of that
// target ("#/$defs/a"), so the rest of the compiler sees local pointers
// only. A reference to a document kiln does not have (a remote URL) is left
// as written, and refused when compiled: kiln fetches nothing.
//
// $dynamicRef resolves like $ref when its target has no $dynamicAnchor of
// the fragment's name, or when exactly one schema of the document has that
// $dynamicAnchor (the dynamic scope can then find no other); otherwise it is
// left alone and refused.

// rootBase is the base URI of a document without a root $id.
const rootBase = "https://kiln.invalid/schema.json"

// schemaKeywordsIn name the members of a schema object that hold schemas:
// one schema, an object of schemas, or an array of schemas.
var (
	subschemaOne  = []string{"additionalProperties", "propertyNames", "items", "additionalItems", "contains", "not", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"}
	subschemaMap  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	subschemaList = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

type uriIndex struct {
	resources map[string]string // absolute URI without fragment → pointer
	anchors   map[string]string // URI#anchor → pointer
	dynamic   map[string][]string
	refs      []pendingRef
}

type pendingRef struct {
	node    *jsonValue // the schema object holding the reference
	kw      string     // $ref or $dynamicRef
	base    *url.URL
	pointer string
}

// resolveDocumentRefs rewrites the document's references (see above).
func resolveDocumentRefs(doc *jsonValue) {
	idx := &uriIndex{resources: map[string]string{}, anchors: map[string]string{}, dynamic: map[string][]string{}}
	base, _ := url.Parse(rootBase)
	idx.walk(doc, base, "", 0)
	for _, r := range idx.refs {
		v := r.node.get(r.kw)
		if v == nil || v.kind != jString {
			continue
		}
		ptr, ok := idx.lookup(r, v.str, doc)
		if !ok {
			continue
		}
		for i := range r.node.obj {
			if r.node.obj[i].key == r.kw {
				r.node.obj[i].key = "$ref"
				r.node.obj[i].val = &jsonValue{kind: jString, str: "#" + ptr}
			}
		}
	}
}

// walk indexes the schema s at pointer ptr with base URI base.
func (idx *uriIndex) walk(s *jsonValue, base *url.URL, ptr string, depth int) {
	if s == nil || s.kind != jObject || depth > maxJSONDepth {
		return
	}
	if id := s.get("$id"); id != nil && id.kind == jString && strings.HasPrefix(id.str, "#") && len(id.str) > 1 {
		// Drafts 6-7: "$id": "#name" is a plain-name anchor.
		key := base.String() + id.str
		if _, dup := idx.anchors[key]; !dup {
			idx.anchors[key] = ptr
		}
	} else if id != nil && id.kind == jString {
		if u, err := url.Parse(id.str); err == nil {
			base = base.ResolveReference(u)
			b := *base
			b.Fragment, b.RawFragment = "", ""
			base = &b
			if _, dup := idx.resources[base.String()]; !dup {
				idx.resources[base.String()] = ptr
			}
		}
	}
	if ptr == "" {
		idx.resources[base.String()] = ""
	}
	for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
		if a := s.get(kw); a != nil && a.kind == jString {
			key := base.String() + "#" + a.str
			if _, dup := idx.anchors[key]; !dup {
				idx.anchors[key] = ptr
			}
			if kw == "$dynamicAnchor" {
				idx.dynamic[a.str] = append(idx.dynamic[a.str], ptr)
			}
		}
	}
	for _, kw := range []string{"$ref", "$dynamicRef"} {
		if r := s.get(kw); r != nil && r.kind == jString && !(kw == "$dynamicRef" && s.get("$ref") != nil) {
			idx.refs = append(idx.refs, pendingRef{node: s, kw: kw, base: base, pointer: ptr})
		}
	}
	for _, kw := range subschemaOne {
		if v := s.get(kw); v != nil {
			idx.walk(v, base, childPath(ptr, kw), depth+1)
		}
	}
	for _, kw := range subschemaMap {
		if v := s.get(kw); v != nil && v.kind == jObject {
			for _, m := range v.obj {
				idx.walk(m.val, base, childPath(ptr, kw, m.key), depth+1)
			}
		}
	}
	for _, kw := range subschemaList {
		if v := s.get(kw); v != nil && v.kind == jArray {
			for i, x := range v.arr {
				idx.walk(x, base, childPath(ptr, kw, itoa(i)), depth+1)
			}
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// lookup returns the local pointer of a reference's target, if the
// document holds it.
func (idx *uriIndex) lookup(r pendingRef, ref string, doc *jsonValue) (string, bool) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	abs := r.base.ResolveReference(u)
	frag := abs.Fragment
	raw := abs.EscapedFragment()
	doc0 := *abs
	doc0.Fragment, doc0.RawFragment = "", ""
	root, ok := idx.resources[doc0.String()]
	if !ok {
		return "", false
	}
	esc := func(p string) string { return strings.ReplaceAll(p, "%", "%25") }
	switch {
	case frag == "":
		return esc(root), true
	case strings.HasPrefix(frag, "/"):
		// A JSON pointer inside the resource: kept escaped as written
		// (resolve decodes it), after the resource's own pointer.
		return esc(root) + raw, true
	}
	target, ok := idx.anchors[doc0.String()+"#"+frag]
	if !ok {
		return "", false
	}
	if r.kw == "$dynamicRef" {
		// Dynamic: only where the dynamic scope cannot pick another.
		if n := nodeAt(doc, target); n != nil {
			if da := n.get("$dynamicAnchor"); da != nil && da.kind == jString && da.str == frag && len(idx.dynamic[frag]) != 1 {
				return "", false
			}
		}
	}
	return esc(target), true
}

// nodeAt returns the value at an unescaped-by-childPath JSON pointer.
func nodeAt(doc *jsonValue, ptr string) *jsonValue {
	if ptr == "" {
		return doc
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch cur.kind {
		case jObject:
			cur = cur.get(tok)
		case jArray:
			i := 0
			for _, ch := range tok {
				i = i*10 + int(ch-'0')
			}
			if i < 0 || i >= len(cur.arr) {
				return nil
			}
			cur = cur.arr[i]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}
