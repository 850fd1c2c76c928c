//go:build linux

package simd

import (
	"syscall"
	"unsafe"
)

// threadCPUTime is the CPU time the calling OS thread has used, in ns
// (CLOCK_THREAD_CPUTIME_ID), and whether the clock could be read.
func threadCPUTime() (int64, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return ts.Nano(), true
}
