//go:build !unix

package edgelist

import (
	"errors"
	"os"
)

// mapFile cannot map here: openMapped reads the file instead.
func mapFile(*os.File, int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("no memory mapping on this system")
}

// allocKeys allocates n keys on the heap; free does nothing.
func allocKeys(n int64) ([]uint64, func() error, error) {
	return make([]uint64, n), func() error { return nil }, nil
}
