package model

// SetHFPermute turns LoadHF's llama q/k row permutation on or off and
// returns a function restoring it: the test that shows it matters.
func SetHFPermute(on bool) (restore func()) {
	old := hfPermute
	hfPermute = on
	return func() { hfPermute = old }
}
