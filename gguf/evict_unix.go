//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package gguf

import "golang.org/x/sys/unix"

// evictPages drops the whole pages inside b from this process's mapping.
func evictPages(b []byte) {
	page := unix.Getpagesize()
	if len(b) < page {
		return
	}
	// b lies in the mapping; page-align inward so that neighbours' pages
	// stay mapped (dropping them would be harmless, only slower).
	start := (page - int(addrOf(b)%uintptr(page))) % page
	end := start + (len(b)-start)/page*page
	if end > start {
		unix.Madvise(b[start:end], unix.MADV_DONTNEED)
	}
}
