package gguf

import "unsafe"

// Evict tells the system that this process will not read tensor t's data
// again soon: for a mapped file (Open on Unix) the tensor's whole pages
// leave the process's resident set (MADV_DONTNEED; they stay in the page
// cache, and a later read faults them back in, so Data stays valid and
// unchanged). Loaders call it for tensors they copied elsewhere, such as
// weights repacked at load. It does nothing for files read onto the heap
// or parsed from memory, or after Close.
func (f *File) Evict(t *TensorInfo) {
	if f.unmap == nil { // not a mapping: MADV_DONTNEED would zero heap memory
		return
	}
	if d := f.Data(t); len(d) > 0 {
		evictPages(d)
	}
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
