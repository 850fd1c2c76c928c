package grammar

// RegexGrammar compiles a regular expression (the ECMA-262 subset of
// parseRegex) into a grammar whose language is the strings the regex
// matches whole, as vLLM's regex-guided decoding constrains an output:
// ^ and $ change nothing, since the output is the whole match. Features
// outside the subset are an error naming them.
func RegexGrammar(src string) (*Grammar, error) {
	branches, err := parseRegex(src)
	if err != nil {
		return nil, err
	}
	alts := make([]*Expr, len(branches))
	for i, b := range branches {
		alts[i] = b.body
	}
	g := &Grammar{Rules: []Rule{{Name: "root", Body: Alt(alts...)}}}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}
