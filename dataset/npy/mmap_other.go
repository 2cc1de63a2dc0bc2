//go:build !unix

package npy

import (
	"errors"
	"os"
)

// mmapFile is unavailable on this platform; Map falls back to reading.
func mmapFile(f *os.File, length int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("mmap is not available on this platform")
}
