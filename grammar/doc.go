// Package grammar constrains generation to a formal language: a context-free
// grammar over bytes, written as GBNF text (llama.cpp's format) or compiled
// from a JSON Schema, matched incrementally one byte at a time, and turned
// into per-step token masks over a model's vocabulary.
//
// The pipeline:
//
//	GBNF text ──ParseGBNF──┐
//	JSON Schema ──CompileJSONSchema──┼──▶ *Grammar (rules of Expr trees; classes over code points)
//	JSONObject() ──────────┘                │ Compile
//	                                        ▼
//	                                   *Program (per rule an ε-free automaton over bytes
//	                                    with call edges to rules; immutable, shareable)
//	                                        │ NewMatcher            │ NewTokenIndex(prog, vocab)
//	                                        ▼                       ▼
//	                                   *Matcher (bytes)        *TokenIndex (vocabulary trie, cache of
//	                                                            context-free partial masks; shared)
//	                                                                │ NewTokenMatcher
//	                                                                ▼
//	                                                           *TokenMatcher: AcceptToken, Allows,
//	                                                            FillMask, Rollback, CanEnd
//
// The matcher is an Earley parser whose items are (automaton node, origin)
// pairs ("Earley over regular right-hand sides"), chosen over a pushdown
// automaton because it accepts every context-free grammar a GBNF request can
// hold (ambiguity, left recursion, nullable rules) with no grammar
// transformation, while a rule's regular parts (a string body, a number)
// stay inside one rule's automaton, where scanning a byte never touches the
// parse stack. Earley sets are hash-consed: an item's origin names the set
// it started in by that set's id, so two sets with the same items behave the
// same for ever after, and the byte transitions between sets are cached (a
// lazily built DFA over sets). See earley.go.
//
// Token masks walk a trie of the vocabulary's byte strings. Because a walk
// that never completes an item begun before the current position depends only
// on the automaton nodes of the current set's items, the index caches, per
// such "context-free" key, the tokens accepted without looking below the
// current position and the trie ranges where the answer depends on the parse
// stack; only those ranges are walked per step. See index.go.
//
// JSON Schema support is fail-closed: a keyword the compiler does not enforce
// is an *UnsupportedError naming it, never silently dropped. See schema.go for
// the supported subset, the property order (schema order) and the whitespace
// and string-escape forms the generated grammar allows.
package grammar
