package grammar

import (
	"fmt"
	"sync"
)

// String formats as grammars over the string's content (all ASCII, so the
// JSON text is the content itself). Each is a subset of what RFC 3339 /
// RFC 4122 / RFC 5321 / RFC 3986 allow, chosen so that every string it
// derives is valid:
//
//	date       full-date with real month lengths and leap years (Feb 29 only in leap years)
//	time       full-time: hh:mm:ss(.frac)? with Z/z or ±hh:mm; a leap second
//	           (:60) only at 23:59 with a zero offset
//	date-time  date [Tt] time
//	uuid       8-4-4-4-12 hex digits, either case
//	email      dot-atom local part of at most 64 characters, then a host name
//	           of one to three labels (letters, digits, inner hyphens, at most
//	           60 characters each); no quoted local parts or address literals
//	uri        an absolute URI: scheme ":" (// authority path | path) ?query
//	           #fragment, with host names as reg-names (no IP literals)
var formatGBNF = map[string]string{
	"date": `root ::= date
date ::= year "-" md | leap "-02-29"
year ::= [0-9]{4}
md ::= ("01" | "03" | "05" | "07" | "08" | "10" | "12") "-" d31 | ("04" | "06" | "09" | "11") "-" d30 | "02-" d28
d31 ::= "0" [1-9] | [12] [0-9] | "3" [01]
d30 ::= "0" [1-9] | [12] [0-9] | "30"
d28 ::= "0" [1-9] | "1" [0-9] | "2" [0-8]
leap ::= [0-9]{2} m4 | (m4 | "00") "00"
m4 ::= "0" [48] | [2468] [048] | [13579] [26]
`,
	"time": `root ::= time
time ::= hh ":" mm ":" ss frac? offset | "23:59:60" frac? zero
hh ::= [01] [0-9] | "2" [0-3]
mm ::= [0-5] [0-9]
ss ::= [0-5] [0-9]
frac ::= "." [0-9]+
offset ::= [Zz] | [+-] hh ":" mm
zero ::= [Zz] | [+-] "00:00"
`,
	"uuid": `root ::= h{8} "-" h{4} "-" h{4} "-" h{4} "-" h{12}
h ::= [0-9a-fA-F]
`,
	"email": `root ::= local "@" domain
local ::= atext{1,32} ("." atext{1,15}){0,2}
atext ::= [A-Za-z0-9!#$%&'*+/=?^_` + "`" + `{|}~-]
domain ::= label ("." label){0,2}
label ::= [A-Za-z0-9] ([A-Za-z0-9-]{0,58} [A-Za-z0-9])?
`,
	"uri": `root ::= scheme ":" hier ("?" query)? ("#" fragment)?
scheme ::= [A-Za-z] [A-Za-z0-9+.-]*
hier ::= "//" authority abempty | "/" (nzseg abempty)? | nzseg abempty | ""
authority ::= (userinfo "@")? host (":" [0-9]{0,5})?
userinfo ::= (unreserved | pct | subdelims | ":")*
host ::= (unreserved | subdelims)*
abempty ::= ("/" pchar*)*
nzseg ::= pchar+
pchar ::= unreserved | pct | subdelims | [:@]
query ::= (pchar | [/?])*
fragment ::= (pchar | [/?])*
unreserved ::= [A-Za-z0-9._~-]
pct ::= "%" [0-9A-Fa-f] [0-9A-Fa-f]
subdelims ::= [!$&'()*+,;=]
`,
}

var (
	formatOnce     sync.Once
	formatGrammars map[string]*Grammar
)

// formatGrammar returns the content grammar of a format, or nil.
func formatGrammar(name string) *Grammar {
	formatOnce.Do(func() {
		formatGrammars = map[string]*Grammar{}
		for n, src := range formatGBNF {
			g, err := ParseGBNF(src)
			if err != nil {
				panic(fmt.Sprintf("grammar: format %s: %v", n, err)) // a bug in the tables above
			}
			formatGrammars[n] = g
		}
		dt := &Grammar{}
		d := dt.importRules(formatGrammars["date"])
		t := dt.importRules(formatGrammars["time"])
		dt.Rules = append(dt.Rules, Rule{Name: "date-time", Body: Seq(Ref(d), Class(RuneRange{'T', 'T'}, RuneRange{'t', 't'}), Ref(t))})
		dt.Root = len(dt.Rules) - 1
		formatGrammars["date-time"] = dt
	})
	return formatGrammars[name]
}

// importRules copies the rules of h into g (renumbering references) and
// returns the index of h's root in g.
func (g *Grammar) importRules(h *Grammar) int {
	base := len(g.Rules)
	for _, r := range h.Rules {
		g.Rules = append(g.Rules, Rule{Name: r.Name, Body: shiftRefs(r.Body, base)})
	}
	return base + h.Root
}

func shiftRefs(e *Expr, base int) *Expr {
	c := *e
	switch e.Op {
	case OpRef:
		c.Rule += base
	case OpSeq, OpAlt, OpRepeat:
		c.Subs = make([]*Expr, len(e.Subs))
		for i, s := range e.Subs {
			c.Subs[i] = shiftRefs(s, base)
		}
	}
	return &c
}

// formatExpr returns a format's content as one expression (its rules,
// none recursive, inlined), for automata (regexdfa.go); nil for a format
// kiln does not know.
func formatExpr(name string) *Expr {
	g := formatGrammar(name)
	if g == nil {
		return nil
	}
	var inline func(e *Expr, depth int) *Expr
	inline = func(e *Expr, depth int) *Expr {
		if depth > maxExprDepth {
			panic("grammar: a recursive format grammar") // not reached: the tables above
		}
		switch e.Op {
		case OpRef:
			return inline(g.Rules[e.Rule].Body, depth+1)
		case OpSeq, OpAlt, OpRepeat:
			c := *e
			c.Subs = make([]*Expr, len(e.Subs))
			for i, x := range e.Subs {
				c.Subs[i] = inline(x, depth+1)
			}
			return &c
		}
		return e
	}
	return inline(g.Rules[g.Root].Body, 0)
}
