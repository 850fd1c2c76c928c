//go:build !linux

package kernels

// adviseHuge is a no-op where there is no MADV_HUGEPAGE.
func adviseHuge([]byte) {}
