package simd

// Until the amd64 assembly lands, the generic Go code is the only
// implementation on every platform.
const (
	hasFast  = false
	fastName = "generic"
)
