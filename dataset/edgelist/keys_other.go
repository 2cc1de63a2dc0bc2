//go:build !unix

package edgelist

// allocKeys allocates n keys on the heap; free does nothing.
func allocKeys(n int64) ([]uint64, func() error, error) {
	return make([]uint64, n), func() error { return nil }, nil
}
