package npy

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/fanout-gnn/fanout/dataset/internal/mmapfile"
)

// Map opens the .npy file at path and returns its data as a typed slice that
// aliases a read-only memory mapping of the file (no copy). The slice is
// valid until closer is called; writing to it faults. When mapping is not
// possible (no mmap on this platform, not a regular file, big-endian or bool
// data that needs converting, misaligned data offset) the file is read into
// memory instead and closer does nothing. closer may be called more than once.
// Errors name the file.
func Map(path string) (data any, shape []int64, closer func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	data, shape, closer, err = mapFile(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, shape, closer, nil
}

// noop is the closer of data that was read rather than mapped.
func noop() error { return nil }

// mapFile maps an opened .npy file, falling back to reading it.
func mapFile(f *os.File) (any, []int64, func() error, error) {
	br := bufio.NewReaderSize(f, 4096)
	h, err := ReadHeader(br)
	if err != nil {
		return nil, nil, nil, err
	}
	l, err := checkHeader(h)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	regular := st.Mode().IsRegular()
	if regular {
		if err := checkSize(l, st.Size()); err != nil {
			return nil, nil, nil, err
		}
	}
	if regular && l.bytes > 0 && l.t.kind != 'b' && !l.t.needsSwap() {
		mem, unmap, err := mmapfile.ReadOnly(f, l.h.DataOffset+l.bytes)
		if err == nil {
			b := mem[l.h.DataOffset:]
			if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(l.t.size) == 0 {
				return viewBytes(l.t, b), h.Shape, once(unmap), nil
			}
			if err := unmap(); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	data, err := readBody(br, l, regular)
	if err != nil {
		return nil, nil, nil, err
	}
	return data, h.Shape, noop, nil
}

// once wraps f so that only its first call has an effect.
func once(f func() error) func() error {
	var o sync.Once
	var err error
	return func() error {
		o.Do(func() { err = f() })
		return err
	}
}
