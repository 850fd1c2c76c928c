package gguf

import (
	"errors"
	"fmt"
	"os"
)

// Open maps the file at path read-only and parses it. Close the File when
// done with it and with every slice Data returned.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: %s is not a regular file", path)
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
