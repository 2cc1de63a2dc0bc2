//go:build unix && !aix

package dataset

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive advisory lock (flock) on the directory path,
// which the system releases when the process ends, however it ends. It
// returns nil, nil when another process holds it.
func lockDir(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return f, nil
}

// unlockDir releases lockDir's lock (closing the descriptor does).
func unlockDir(f *os.File) {
	if f != nil {
		f.Close()
	}
}
