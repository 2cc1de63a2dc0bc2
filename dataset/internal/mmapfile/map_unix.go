//go:build unix

package mmapfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// ReadOnly maps the first size bytes of f read-only and returns the
// mapping and the function that unmaps it. size must be positive: a
// mapping of nothing is an error.
func ReadOnly(f *os.File, size int64) ([]byte, func() error, error) {
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
