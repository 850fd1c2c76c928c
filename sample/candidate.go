package sample

// candidate is one token still in the running during a Sample call.
type candidate struct {
	logit float32 // after bias and penalties, at temperature 1
	p     float32 // scratch weight, exp(logit - max) or its tempered form
	id    int32
}

// better is the total order every selection uses: higher logit first, ties
// to the lower id. Being total (ids are distinct) makes every filter's result
// a function of the logits alone, whatever order the scratch is in.
func better(a, b candidate) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

// cmpCandidates orders candidates best first (for slices.SortFunc).
func cmpCandidates(a, b candidate) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}
