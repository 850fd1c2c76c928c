package grammar

import "fmt"

// Limits bounds the memory that compiling one grammar may take. The
// automaton of a grammar grows with its text (a 5 MB enum is ~5 million
// automaton states) and with repetition counts (a{1000}{1000} is a million),
// so a request's grammar is compiled against a budget that is checked as
// the automaton is built, not after: a grammar over it fails with
// ErrTooLarge having spent at most about the budget.
type Limits struct {
	// MaxBytes is the estimated peak heap of the compilation (the
	// automaton with ε edges, then the program that replaces it), in
	// bytes: twice the bytes its structures hold, as Go's collector lets
	// the heap reach twice the live bytes before it runs (GOGC=100) and
	// growing arrays leave their old copies behind as garbage.
	MaxBytes int64
}

// DefaultLimits allows 64 MiB: about 100 thousand automaton states, so a
// JSON Schema enum of ~100 KB of strings or a regex expanding to as many
// bytes. The largest schema of the JSON Schema Test Suite needs 15 MiB.
var DefaultLimits = Limits{MaxBytes: 64 << 20}

// budget counts estimated bytes against a limit.
type budget struct {
	used, max int64
}

func newBudget(l Limits) *budget {
	m := l.MaxBytes
	if m <= 0 {
		m = DefaultLimits.MaxBytes
	}
	return &budget{max: m}
}

// charge adds n bytes held (counted twice: see Limits.MaxBytes); past
// the limit it returns an ErrTooLarge error.
func (b *budget) charge(n int64) error {
	b.used += 2 * n
	if b.used > b.max {
		return fmt.Errorf("compiling it needs more than %d MiB of memory: %w", b.max>>20, ErrTooLarge)
	}
	return nil
}
