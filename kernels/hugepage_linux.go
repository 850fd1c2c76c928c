package kernels

import "syscall"

// adviseHuge asks for transparent huge pages (2 MiB) on b, where the
// system leaves them to madvise: decode streams the whole of the repacked
// weights every token, and 4 KiB pages cost a TLB miss every 4 KiB of it.
// A refusal changes nothing but speed.
func adviseHuge(b []byte) {
	const madvHugepage = 14 // MADV_HUGEPAGE
	syscall.Madvise(b, madvHugepage)
}
