//go:build unix

package npy

import (
	"os"

	"golang.org/x/sys/unix"
)

// mmapFile maps the first length bytes of f read-only and returns the mapping
// and its unmap function.
func mmapFile(f *os.File, length int64) ([]byte, func() error, error) {
	mem, err := unix.Mmap(int(f.Fd()), 0, int(length), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return mem, func() error { return unix.Munmap(mem) }, nil
}
