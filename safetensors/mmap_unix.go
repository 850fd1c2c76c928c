//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package safetensors

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of fh read-only and shared: pages come from the
// page cache on first touch and are shared by every process reading the model.
func mapFile(fh *os.File, size int) ([]byte, func([]byte) error, error) {
	data, err := syscall.Mmap(int(fh.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, syscall.Munmap, nil
}
