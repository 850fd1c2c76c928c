package gguf

import "unsafe"

// Evict tells the system that this process will not read the tensor data
// b (a slice Data returned) again soon: for a mapped file (Open on Unix)
// its whole pages leave the process's resident set (MADV_DONTNEED; they
// stay in the page cache, and a later read faults them back in, so Data
// stays valid and unchanged). Loaders call it for tensors they copied
// elsewhere, such as weights repacked at load. It does nothing for files
// read onto the heap or parsed from memory, after Close, or for b outside
// this file's image.
func (f *File) Evict(b []byte) {
	if f.unmap == nil || len(b) == 0 || len(f.data) == 0 { // not a mapping: MADV_DONTNEED would zero heap memory
		return
	}
	lo, p := addrOf(f.data), addrOf(b)
	if p < lo || p-lo+uintptr(len(b)) > uintptr(len(f.data)) {
		return
	}
	evictPages(b)
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
