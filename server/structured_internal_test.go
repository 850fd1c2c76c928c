package server

import (
	"errors"
	"kiln/grammar"
	"net/http"
	"testing"
	"time"
)

// TestCompileTimeout: a compilation that outlasts the timeout is a 400
// naming the field, not a wait.
func TestCompileTimeout(t *testing.T) {
	// A schema of many nested anyOf/enum alternatives takes more than a
	// nanosecond to compile on any machine.
	spec := &constraintSpec{kind: "json_schema", param: "response_format",
		text: `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","maxLength":50},{"type":"integer","minimum":-99999,"maximum":99999}]}}}`}
	sl := &slot{}
	vocab, err := grammar.NewVocabulary([][]byte{[]byte("{"), []byte("}"), []byte("\"a\""), []byte(":"), []byte("1"), nil}, []int32{5})
	if err != nil {
		t.Fatal(err)
	}
	sl.vocabOnce.Do(func() { sl.vocab = vocab }) // the background compile finishes on it
	_, err = compileIndex(sl, spec, time.Nanosecond)
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != "grammar_compile_timeout" || ae.Param != "response_format" {
		t.Fatalf("err %v, want a 400 grammar_compile_timeout on response_format", err)
	}
}
