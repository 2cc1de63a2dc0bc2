//go:build unix

package edgelist

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// allocKeys allocates n keys outside the Go heap (an anonymous mapping),
// so that the budget's buffer does not raise the collector's heap goal:
// garbage of the parsing would otherwise grow to the buffer's size before
// a collection. free unmaps it.
func allocKeys(n int64) ([]uint64, func() error, error) {
	b, err := unix.Mmap(-1, 0, int(n*keyBytes), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("allocating the %d-byte sort buffer: %w", n*keyBytes, err)
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n), func() error { return unix.Munmap(b) }, nil
}
