//go:build !unix || aix

package checkpoint

import "os"

// lockFile does nothing where flock is not available: two processes can
// still share a run directory there.
func lockFile(path string, record bool) (*os.File, error) { return nil, nil }

// unlockRemove closes f (nothing was locked here).
func unlockRemove(f *os.File, path string) error { return f.Close() }
