//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package kernels

import "syscall"

// allocAnon returns n zeroed bytes outside the Go heap (an anonymous
// private mapping): repacked weights are as large as the model, and on the
// heap they would let the garbage collector's target (twice the live heap)
// grow by as much again. free gives the memory back.
func allocAnon(n int) (b []byte, free func(), err error) {
	b, err = syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	adviseHuge(b)
	return b, func() { syscall.Munmap(b) }, nil
}
