package quant

import "fmt"

// blocks returns the number of blocks in a (src, dst) pair of a block format
// with qk elements and bb bytes per block, and panics with a message naming
// the format when the lengths disagree. The per-format functions are hot-path
// primitives with a length contract (like copy with a fixed size); callers
// holding untrusted lengths use Dequantize/Quantize, which return errors.
func blocks(name string, nbytes, nelems, qk, bb int) int {
	if nelems%qk != 0 || nbytes != nelems/qk*bb {
		panic(fmt.Sprintf("quant: %s: %d bytes and %d elements are not a whole number of matching %d-element/%d-byte blocks", name, nbytes, nelems, qk, bb))
	}
	return nelems / qk
}
