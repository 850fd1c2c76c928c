package gguf

import (
	"errors"
	"fmt"
	"os"
)

// Open maps the file at path read-only and parses it. Close the File when
// done with it and with every slice Data returned.
//
// Anything but a regular file is refused before it is opened: opening a
// FIFO blocks until a writer comes, which may be never.
func Open(path string) (*File, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: %s is not a regular file (%s)", path, fileKind(st.Mode()))
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if !st.Mode().IsRegular() { // replaced since the Stat
		return nil, fmt.Errorf("gguf: %s is not a regular file (%s)", path, fileKind(st.Mode()))
	}
	size := st.Size()
	if size < 24 {
		// Too small for a header; also avoids mapping an empty file, which mmap refuses.
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		return parseAt(path, data, nil)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("gguf: %s is %d bytes, too large to map on this platform", path, size)
	}
	data, unmap, err := mapFile(fh, int(size))
	if err != nil {
		return nil, fmt.Errorf("gguf: mapping %s: %w", path, err)
	}
	return parseAt(path, data, unmap)
}

// parseAt parses data read from path, naming path in a FormatError and
// releasing data on failure.
func parseAt(path string, data []byte, unmap func([]byte) error) (*File, error) {
	f, err := Parse(data)
	if err != nil {
		if unmap != nil {
			unmap(data)
		}
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = path
		}
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// fileKind names a non-regular file's type for an error message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}
